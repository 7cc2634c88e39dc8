"""SCRAM decisions (Kafka's ``ScramControlManager``): AlterUserScramCredentials."""
