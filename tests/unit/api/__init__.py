"""Request handlers, the API table, the authorizer's checks, the topics and the groups."""
