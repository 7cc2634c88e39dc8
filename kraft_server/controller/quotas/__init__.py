"""Client quota decisions (Kafka's ``ClientQuotaControlManager``): AlterClientQuotas, its
validation and its answers."""
