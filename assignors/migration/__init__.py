"""Moving groups to the consumer protocol (KIP-848): which groups can migrate online, where
each lands, and what each rolling bounce costs (docs/migration.md)."""
