"""TLS/SASL configuration, SASL exchanges, the ACL authorizer."""
