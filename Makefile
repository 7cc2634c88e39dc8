# Set-up is self-contained: `make test` and `make run` create .venv and install what they need.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The compiled codecs (setup.py, wire/native.py) are rebuilt when a wire source changes;
# KRAFT_PURE_PYTHON=1 skips them (and forces the pure-Python codecs at run time).
COMPILED := $(VENV)/.compiled
ifeq ($(filter-out 0,$(KRAFT_PURE_PYTHON)),)
CODECS := $(COMPILED)
else
CODECS := $(STAMP)
endif
export KRAFT_CACHE ?= $(CURDIR)/.cache

# `make docs`: the site (mkdocs.yml, docs/) built in strict mode into site/.
.PHONY: docs stream venv test test-slow fuzz simulate simulate-long bench bench-raft bench-startup bench-controller bench-scale bench-membership bench-move codegen check-codegen kafka-dist run run-cluster clean

$(STAMP): setup.cfg pyproject.toml setup.py
	@command -v java >/dev/null || (apt-get update && apt-get install -y openjdk-17-jdk-headless)
	@command -v mvn >/dev/null || (apt-get update && apt-get install -y maven)
	@command -v kcat >/dev/null || (apt-get update && apt-get install -y kcat)
	@command -v chromedriver >/dev/null || (apt-get update && apt-get install -y chromium chromium-driver)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	KRAFT_PURE_PYTHON=1 $(PY) -m pip install -q -e '.[test,spark,docs]'
	touch $(STAMP)

$(COMPILED): $(STAMP) $(wildcard wire/*.py wire/*.pxd wire/messages/*.py wire/messages/*.pxd wire/records/*.py wire/records/*.pxd)
	$(PY) -m pip install -q --no-deps -e .
	touch $(COMPILED)

# Bytecode written ahead of time: imports then skip compiling, even where PYTHONDONTWRITEBYTECODE
# is set (a node started from source-only modules spends ~0.7 s compiling them on every start).
BYTECODE := $(VENV)/.bytecode
$(BYTECODE): $(CODECS) $(shell find kraft_server wire tools codegen -name '*.py' 2>/dev/null)
	$(PY) -m compileall -q -j 2 kraft_server wire tools codegen bench tests >/dev/null
	touch $(BYTECODE)

venv: $(STAMP)

# docs/configuration.md must match python -m tools.docs_config, and the API table of
# docs/compatibility.md python -m tools.docs_compat; broken links fail the build.
docs: $(STAMP)
	$(PY) -m tools.docs_config --check
	$(PY) -m tools.docs_compat --check
	$(PY) -m mkdocs build --strict --quiet --site-dir site

# The default release and every release of the version matrix (tools/kafka_dist/releases.py);
# KAFKA_VERSION=X prepares that one release only.
kafka-dist: $(STAMP)
	$(PY) -m tools.kafka_dist $(if $(KAFKA_VERSION),--version $(KAFKA_VERSION),--matrix)

codegen: $(STAMP)
	$(PY) -m codegen

check-codegen: $(STAMP)
	$(PY) -m codegen --check

# KRAFT_STRICT_SKIPS: a real-peer test that skips for something this Makefile installs
# (a JDK, Maven, kcat, the spark extra, the pinned jars) fails the run (tests/conftest.py).
# The default suite runs on TEST_WORKERS pytest-xdist workers (mostly waiting on JVMs and
# sockets, so more workers than cores); --dist loadfile keeps each file on one worker, so a
# module's shared Kafka cluster is built once. TEST_WORKERS=0 runs it in one process.
# docs/development.md has the layout and the timings.
TEST_WORKERS ?= 4
test: $(BYTECODE) kafka-dist
	$(PY) -m codegen --check
	KRAFT_STRICT_SKIPS=1 $(PY) -m pytest -m 'not slow' -p no:cacheprovider --durations=30 \
		-n $(TEST_WORKERS) --dist loadfile

# The slow suite on SLOW_WORKERS workers (default 2: its files each start a quorum and
# several broker JVMs, so fewer than the default suite's); SLOW_WORKERS=0 runs it serially.
SLOW_WORKERS ?= 2
test-slow: $(BYTECODE) kafka-dist
	KRAFT_STRICT_SKIPS=1 $(PY) -m pytest -m slow -p no:cacheprovider -rfE --durations=30 \
		-n $(SLOW_WORKERS) --dist loadfile

fuzz: $(BYTECODE)
	FUZZ_INPUTS=$${FUZZ_INPUTS:-2000000} $(PY) -m pytest tests/unit/wire/test_fuzz.py -p no:cacheprovider

# The live fuzzer (tests/process/test_fuzz_live.py): bad requests of every advertised API key
# and version at a running 3-node quorum, with valid clients alongside. FUZZ_LIVE_INPUTS,
# FUZZ_LIVE_SECONDS set the budget; FUZZ_LIVE_SEED=N replays a run (the seed is printed).
.PHONY: fuzz-live
fuzz-live: $(BYTECODE)
	FUZZ_LIVE_INPUTS=$${FUZZ_LIVE_INPUTS:-100000} FUZZ_LIVE_SECONDS=$${FUZZ_LIVE_SECONDS:-600} \
		$(PY) -m pytest tests/process/test_fuzz_live.py -m slow -s -p no:cacheprovider

SEEDS ?= 200
EVENTS ?= 5000
simulate: $(BYTECODE)
	$(PY) -m tests.simulation --seeds $(SEEDS) --events $(EVENTS) $(if $(NODES),--nodes $(NODES)) $(if $(PROFILE),--profile $(PROFILE))

# The long sweep: 1,000 fresh seeds x 10,000 events for each of default, chaos, disk and
# membership on 3 and 5 nodes, on every core (FIRST_SEED=N replays a sweep).
LONG_SEEDS ?= 1000
LONG_EVENTS ?= 10000
simulate-long: $(BYTECODE)
	$(PY) -m tests.simulation.long --seeds $(LONG_SEEDS) --events $(LONG_EVENTS) $(if $(FIRST_SEED),--first-seed $(FIRST_SEED))

bench: $(BYTECODE)
	$(PY) bench/wire/codec.py

bench-raft: $(BYTECODE) kafka-dist
	$(PY) bench/raft/raft.py

# The Raft bench over PLAINTEXT, SSL and SASL_SSL, TLS handshakes/s and idle TLS connections' RSS.
.PHONY: bench-security
bench-security: $(BYTECODE) kafka-dist
	$(PY) bench/security/security.py

# Start-up time on a 1M-record log vs a small one (clean restart, kill -9), ours.
bench-startup: $(BYTECODE)
	$(PY) bench/membership/startup.py

# Add-controller to committed voter for logs of 10k/100k records, ours vs Kafka 4.3.1
# (FULL=1 adds 1M records: about 2 more minutes).
# Our controller vs Kafka 4.3.1's with three Kafka brokers (bench/controller/controller.py).
bench-controller: $(BYTECODE) kafka-dist
	$(PY) bench/controller/controller.py

# Our controller vs Kafka's at 100,000+ partitions on 30 broker stand-ins (issue 41,
# bench/controller/scale.py; SIZES=100000,500000,... SIDES=ours,kafka).
bench-scale: $(BYTECODE) kafka-dist
	$(PY) bench/controller/scale.py $(if $(SIZES),--sizes $(SIZES)) $(if $(SIDES),--sides $(SIDES))

bench-membership: $(BYTECODE) kafka-dist
	$(PY) bench/membership/membership.py $(if $(FULL),--full)

# Moving a live cluster between Kafka's controllers and ours, against Kafka's own move:
# the longest gap between acknowledgements (bench/membership/quorum_move.py; OUT=1 adds ours -> Kafka's;
# ROUNDS=N runs every move N times, interleaved, and prints medians and the ratios).
bench-move: $(BYTECODE) kafka-dist
	$(PY) bench/membership/quorum_move.py $(if $(OUT),--out) $(if $(ROUNDS),--rounds $(ROUNDS))

run: $(BYTECODE)
	$(PY) -m tools.run_local --config config/server.properties

# Three of our controllers and three Apache Kafka 4.4.0 brokers on loopback (tools/run_cluster.py).
run-cluster: $(BYTECODE)
	$(PY) -m tools.run_cluster

# Stream __cluster_metadata of `make run`'s node (client listener 127.0.0.1:9092) into
# Spark (local[*]) and print the rows of each micro-batch as it commits; STREAM_ARGS adds
# options (see `python -m tools.metadata_stream --help`).
stream: $(BYTECODE)
	$(PY) -m tools.metadata_stream --bootstrap-server 127.0.0.1:9092 $(STREAM_ARGS)

clean:
	rm -rf $(VENV) .cache

# The chaos harness over real processes (tests/chaos): faults drawn from a printed seed
# (kill -9, SIGSTOP, restarts, partitions, one-way cuts, delay, flapping) under a
# CreateTopics writer, every log checked from disk after each cycle. CHAOS_SEED=N
# replays; CHAOS_NODES (3), CHAOS_KAFKA (Kafka controllers among them, 0), CHAOS_CYCLES (20).
.PHONY: chaos
chaos: $(BYTECODE) kafka-dist
	$(PY) -m tests.chaos --nodes $${CHAOS_NODES:-3} --kafka $${CHAOS_KAFKA:-0} --cycles $${CHAOS_CYCLES:-20} \
		$(if $(CHAOS_SEED),--seed $(CHAOS_SEED))

# Brokers under faults (tests/chaos_brokers): three controllers of ours and four Kafka
# brokers, every link through the proxies, a VerifiableProducer and VerifiableConsumer
# on two topics, faults drawn from a printed seed. CHAOS_SEED=N (or N,N,...) replays;
# CHAOS_CYCLES (20), CHAOS_CONTROLLERS (ours|kafka|both: both runs ours then Kafka's
# on the same seeds and prints them side by side), CHAOS_ELR and CHAOS_FAST_FENCING
# (on|off), CHAOS_JSON=FILE appends each run's summary.
.PHONY: chaos-brokers
chaos-brokers: $(BYTECODE) kafka-dist
	$(PY) -m tests.chaos_brokers --cycles $${CHAOS_CYCLES:-20} --controllers $${CHAOS_CONTROLLERS:-ours} \
		--elr $${CHAOS_ELR:-on} --fast-fencing $${CHAOS_FAST_FENCING:-on} $(if $(CHAOS_SEED),--seed $(CHAOS_SEED)) \
		$(if $(CHAOS_JSON),--json $(CHAOS_JSON))
