"""The commands of jobs/, the top wing: `plan` (the job's flags and exit codes), `describe`,
`plan_group`, `export` (the snapshot exporter), `report` (rebuilding report.html),
`preflight` (the checks made before a SparkSession starts) and `exit_codes` (one definition
of every command's exit codes). This wing may import every other wing (`report`, `export`,
`plan`, `output`, `tables`, `settings`) and the shared `jobs.fs` and `jobs.failures`;
nothing below imports it. The modules at the top of jobs/ (`plan_assignments`, `describe`,
`plan_group`, `export_snapshot`) and `jobs.report.__main__` are the entry points that start
these commands."""
