"""Feature decisions (Kafka's ``FeatureControlManager``): UpdateFeatures."""
