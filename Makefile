# pinboard: `make run` serves the site on the embedded default; `make test` runs every test.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
HOST_PORT ?= 127.0.0.1:8000
# mysqlclient compiles against libmariadb; install it when the library is there.
HAVE_MYSQL_LIB := $(shell pkg-config --exists libmariadb 2>/dev/null && echo yes)

.PHONY: run test lint bench bench-compare worker clean cluster cluster-stop cluster-status drills nemesis release

$(VENV)/.run: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements.txt
	touch $@

$(VENV)/.dev: $(VENV)/.run requirements-dev.txt requirements-mysql.txt
	$(PY) -m pip install -q -r requirements-dev.txt
ifneq ($(HAVE_MYSQL_LIB),)
	$(PY) -m pip install -q -r requirements-mysql.txt
endif
	touch $@

# checkov, for the infra tests (tests/infra), in a virtualenv inside .venv.
$(VENV)/.infra: $(VENV)/.run requirements-infra.txt
	$(PYTHON) -m venv $(VENV)/checkov
	$(VENV)/checkov/bin/python -m pip install -q --upgrade pip
	$(VENV)/checkov/bin/python -m pip install -q -r requirements-infra.txt
	touch $@

run: $(VENV)/.run
	$(PY) manage.py migrate --verbosity 0
	$(PY) manage.py ensure_operator
	$(PY) manage.py shardstore init
	$(PY) manage.py seed_demo --if-empty
	$(PY) manage.py runserver $(HOST_PORT)

lint: $(VENV)/.dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Twice, each in a random order (pytest-randomly prints the seed; --randomly-seed=N
# replays an order): every test with the site on the embedded plane, then
# the site's tests again on servers (MariaDB shards, memcached pools, Redis).
test: $(VENV)/.dev $(VENV)/.infra lint
	$(PY) -m pytest
	PINBOARD_TEST_PLANE=servers $(PY) -m pytest tests/site

# A Celery worker; set PINBOARD_BROKER_URL (e.g. redis://127.0.0.1:6379/1) and the same
# PINBOARD_TOPOLOGY / PINBOARD_REDIS_URL / PINBOARD_MEMCACHED as the site.
worker: $(VENV)/.run
	$(VENV)/bin/celery -A pinboard worker --loglevel=info

# The local cluster (toolkit/cluster/): MariaDB masters with replicas, Redis, memcached,
# ZooKeeper, a Celery worker and gunicorn on loopback, data under var/cluster/. `make cluster`
# again starts only what is not running; cluster-stop stops exactly what it started.
# SHARDS=N makes a new cluster of N logical shards instead of 4096.
$(VENV)/.mysql: $(VENV)/.run requirements-mysql.txt
	$(PY) -m pip install -q -r requirements-mysql.txt
	touch $@

cluster: $(VENV)/.mysql
	$(PY) -m toolkit.cluster up $(if $(SHARDS),--shards $(SHARDS))

cluster-stop: $(VENV)/.run
	$(PY) -m toolkit.cluster down

cluster-status: $(VENV)/.mysql
	$(PY) -m toolkit.cluster status

# Fault drills on the running local cluster (toolkit/drills/): each breaks one thing under
# load and checks every acknowledged write. Some of them: make drills DRILLS="memcached planned".
drills: $(VENV)/.mysql
	$(PY) -m toolkit.drills $(DRILLS)

# The fault injector (toolkit/nemesis/, docs/operations.md): what the drills don't break (a
# replica that stopped receiving, partitions, the operator killed mid-step), each case on a
# fresh cluster of its own under var/nemesis/. Root: it makes network namespaces.
# Some cases: make nemesis CASES="b c".
nemesis: $(VENV)/.mysql
	$(PY) -m toolkit.nemesis $(CASES)

# A release for the AWS deploy (docs/deploy.md): the project at HEAD, and the Puppet tree
# the hosts apply, under build/. RELEASE=... names it (default: today's date and the commit).
RELEASE ?= $(shell date -u +%Y.%m.%d)-$(shell git rev-parse --short HEAD)
release:
	mkdir -p build
	git archive --format=tar.gz -o build/pinboard-$(RELEASE).tar.gz HEAD
	git archive --format=tar.gz -o build/puppet.tar.gz HEAD infra/puppet
	@echo "build/pinboard-$(RELEASE).tar.gz build/puppet.tar.gz (release $(RELEASE))"

bench: $(VENV)/.dev
	$(PY) bench/store_throughput.py

# pinboard against the plain Django-ORM build, 10k to 1M pins (docs/benchmarks.md): needs
# MariaDB, memcached, Redis and wrk; about an hour.
bench-compare: $(VENV)/.dev $(VENV)/.mysql
	$(PY) -m bench.compare.run

clean:
	rm -rf $(VENV) var build .pytest_cache .ruff_cache .mypy_cache
