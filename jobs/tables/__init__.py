"""The job's tables: `schemas` (the data contract as Spark schemas), `inputs` (reading and
conforming a snapshot's tables), `manifest` (the typed `_manifest.json` of an output) and
`group_read` (one group's rows of an output or a snapshot, with pyarrow, no Spark). This
wing imports no other wing of jobs/ (only the shared `jobs.fs` and `jobs.failures`, and the
pure core `assignors`)."""
