"""The job's tables: `schemas` (the data contract as Spark schemas), `inputs` (reading and
conforming a snapshot's tables), `manifest` (the typed `_manifest.json` of an output), and
the one-group path that needs no Spark: `group_read` (one group's rows of an output or a
snapshot, with pyarrow) and `group_view` (those rows as `describe` and `plan_group` print
them, and the report links to). This wing imports no other wing of jobs/ (only the shared
`jobs.fs` and `jobs.failures`, and the pure core `assignors`)."""
