#!/usr/bin/env bash
# A scratch PostgreSQL cluster with the settings a production server has and the CI server lacks
# (autovacuum on, shared buffers a quarter of the memory, room for WAL between checkpoints), so
# that benchmarks can be run on both and their figures stated with the settings beside them.
#
#   queue-benchmarks/scripts/production-like-cluster.sh start    # prints the PGPORT to use
#   PGPORT=5433 queue-benchmarks/scripts/layout-candidates.sh
#   queue-benchmarks/scripts/production-like-cluster.sh stop     # stops and removes it
#
# Debian's postgresql-common tools (pg_createcluster), run as root; the server version is the
# newest installed. Trust authentication on 127.0.0.1 only.
set -euo pipefail

name=workrow_bench
port=${PGPORT:-5433}
version=$(pg_lsclusters -h | awk '{ print $1 }' | sort -V | tail -1)

case ${1:-} in
start)
    if ! pg_lsclusters -h | awk '{ print $2 }' | grep -qx "$name"; then
        pg_createcluster "$version" "$name" -p "$port" -- --auth=trust --encoding=UTF8 > /dev/null
        memory_mb=$(awk '/MemTotal/ { print int($2 / 1024) }' /proc/meminfo)
        shared_mb=$((memory_mb / 4 > 8192 ? 8192 : memory_mb / 4))
        cat > "/etc/postgresql/$version/$name/conf.d/workrow-bench.conf" <<CONF
listen_addresses = '127.0.0.1'
shared_buffers = ${shared_mb}MB
effective_cache_size = $((memory_mb / 2))MB
maintenance_work_mem = 512MB
autovacuum = on
max_wal_size = 8GB
checkpoint_timeout = 15min
wal_compression = on
max_connections = 200
CONF
    fi
    pg_ctlcluster --skip-systemctl-redirect "$version" "$name" start 2> /dev/null || true
    psql -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAt -c "SELECT 'PGPORT=$port: ' || version()" \
        -c "SELECT string_agg(name || '=' || current_setting(name), ', ') FROM unnest(ARRAY['shared_buffers',
            'autovacuum', 'max_wal_size', 'checkpoint_timeout', 'wal_compression', 'synchronous_commit']) AS name"
    ;;
stop)
    pg_dropcluster --stop "$version" "$name"
    ;;
*)
    echo "usage: $0 start|stop" >&2
    exit 2
    ;;
esac
