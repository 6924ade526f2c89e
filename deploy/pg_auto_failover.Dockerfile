# PostgreSQL 15 with pg_auto_failover (`pg_autoctl`), for docker-compose.ha.yml: the same
# image runs the monitor and the data nodes. The official image's apt sources (PGDG) carry
# the extension's package.
FROM postgres:15-bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-15-auto-failover \
    && rm -rf /var/lib/apt/lists/*
USER postgres
ENV PATH=/usr/lib/postgresql/15/bin:$PATH
WORKDIR /var/lib/postgresql
