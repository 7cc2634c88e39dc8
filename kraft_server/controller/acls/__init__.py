"""ACL decisions (Kafka's ``AclControlManager``): CreateAcls, DeleteAcls, DescribeAcls."""
