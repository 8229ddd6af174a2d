"""Checks made before the SparkSession is built: a session takes tens of seconds to start (a
minute on a busy machine), too long to wait for a refusal that needs no Spark.

Only paths that are surely on the local file system are checked here: `file:` URIs, and
plain paths when Hadoop's default file system is the local one as far as can be seen without
a JVM (no `fs.defaultFS` in the config's `[spark]` table, in `spark-defaults.conf`, in
`PYSPARK_SUBMIT_ARGS` or in `core-site.xml` of `HADOOP_CONF_DIR`/`YARN_CONF_DIR`). Under
spark-submit a plain path is left to Spark: its `--conf` and properties file are not visible
before the session. Whatever is not checked here is checked once Spark has started,
with the same message and exit code.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from pathlib import Path

from jobs.tables.manifest import MANIFEST_FILE

# A URI scheme, as Hadoop's Path parses one (`hdfs:`, `s3a:`, `file:`).
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_DEFAULT_FS_KEYS = ("fs.defaultFS", "fs.default.name")


def local_path(path: str, spark_conf: Mapping[str, str] | None = None) -> str | None:
    """`path` as an OS path when it is surely local, else None (Spark judges it later).
    `spark_conf`: the config's `[spark]` properties."""
    if path.startswith("file:"):
        rest = path[len("file:") :]
        if rest.startswith("//"):
            host, slash, tail = rest[2:].partition("/")
            if host not in ("", "localhost") or not slash:
                return None
            rest = "/" + tail
        return rest or None
    if _SCHEME.match(path):
        return None
    return path if _default_fs_is_local(spark_conf or {}) else None


def _default_fs_is_local(spark_conf: Mapping[str, str]) -> bool:
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        return False  # spark-submit: its settings are the JVM's, not visible from here
    given = [spark_conf.get(f"spark.hadoop.{k}") for k in _DEFAULT_FS_KEYS]
    given += _spark_defaults()
    given += _core_site()
    if any(k in os.environ.get("PYSPARK_SUBMIT_ARGS", "") for k in _DEFAULT_FS_KEYS):
        return False
    return all(v is None or v.strip().startswith("file:") for v in given)


def _spark_defaults() -> list[str | None]:
    """`spark.hadoop.fs.defaultFS` of the spark-defaults.conf that pyspark's launcher reads."""
    conf_dir = os.environ.get("SPARK_CONF_DIR")
    if conf_dir is None and os.environ.get("SPARK_HOME"):
        conf_dir = os.path.join(os.environ["SPARK_HOME"], "conf")
    if conf_dir is None:
        return []
    try:
        text = Path(conf_dir, "spark-defaults.conf").read_text(encoding="utf-8")
    except OSError:
        return []
    found: list[str | None] = []
    for line in text.splitlines():
        parts = line.strip().split(None, 1)
        if parts and parts[0] in {f"spark.hadoop.{k}" for k in _DEFAULT_FS_KEYS}:
            found.append(parts[1] if len(parts) > 1 else "")
    return found


def _core_site() -> list[str | None]:
    """`fs.defaultFS` of the core-site.xml files on the JVM's class path."""
    found: list[str | None] = []
    for var in ("HADOOP_CONF_DIR", "YARN_CONF_DIR"):
        conf_dir = os.environ.get(var)
        if not conf_dir:
            continue
        try:
            root = ET.parse(os.path.join(conf_dir, "core-site.xml")).getroot()
        except (OSError, ET.ParseError):
            continue
        for prop in root.iter("property"):
            if (prop.findtext("name") or "").strip() in _DEFAULT_FS_KEYS:
                found.append(prop.findtext("value") or "")
    return found


def report_refusal(
    output_dir: str, exists: Callable[[str], bool], where: str | None = None
) -> str | None:
    """Why `python -m jobs.report` refuses `output_dir` (None: it does not): it never writes
    a page into a snapshot or any folder the planner did not write. `where`: the directory
    to look in, when not `output_dir` as given (its OS path)."""
    where = where or output_dir
    if not exists(where):
        return f"no such output directory: {output_dir}"
    if not exists(f"{where.rstrip('/')}/{MANIFEST_FILE}"):
        return f"{output_dir} is not a planner output (no {MANIFEST_FILE}): nothing written"
    return None
