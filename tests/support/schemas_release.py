"""The Apache Kafka release whose message JSON ``schemas/`` follows.

``tests/interop/test_schema_fidelity.py`` compares our schemas with its JSON and
``tests/interop/test_java_differential.py`` sweeps our codecs against its classes. It is
not the suite's default release (``tools/kafka_dist/releases.py``), which the interop
tests run against; ``tools/kafka_dist`` prepares both side by side.
"""

SCHEMAS_RELEASE = "4.4.0"

# Metadata record types of that release that we do not have yet: name -> (type, why).
# Each must still be missing here; once it lands, drop it from this table.
PENDING_RECORDS: dict[str, tuple[int, str]] = {}

# Metadata record types our schemas have that the suite's default release
# (tools/kafka_dist/releases.py) does not know: name -> type. Tests reading records
# through that release's classes leave these out, and check that they are exactly these.
NEWER_THAN_DEFAULT_RECORDS: dict[str, int] = {}  # none while the default release is 4.4.0
