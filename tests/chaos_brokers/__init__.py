"""Brokers under faults (issue 40): our controllers deciding for real Kafka brokers while
links are cut and processes killed or stopped, checked from the clients' output, the
controller's log and the brokers' files. ``run.py`` ties the parts together; ``make
chaos-brokers`` runs it from the command line (``__main__.py``)."""
