"""The file to hand ``spark-submit`` (it takes a script, not ``-m``)::

    spark-submit --master yarn --jars "$(kraft-metadata-stream --prepare | paste -sd,)" \\
        tools/metadata_stream/submit.py --bootstrap-server node1:9092 ...
"""
import sys

from tools.metadata_stream.__main__ import main

if __name__ == "__main__":
    sys.exit(main())
