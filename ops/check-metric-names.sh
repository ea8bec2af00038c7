#!/usr/bin/env bash
# Lists the metric names the Grafana board and the alert rules use that a Prometheus scrape lacks.
#   curl -s http://localhost:8080/actuator/prometheus > /tmp/scrape.txt
#   ops/check-metric-names.sh /tmp/scrape.txt
# Exits non-zero when one is missing. Workrow's meters of a queue are in the scrape from start-up
# on a node that knows the queue, and a breaker's transitions on a node whose queue has one.
set -euo pipefail
ops="$(cd "$(dirname "$0")" && pwd)"
scrape=${1:?usage: check-metric-names.sh SCRAPE_FILE}
python3 - "$ops" "$scrape" <<'PY'
import json, re, sys
ops, scrape = sys.argv[1], sys.argv[2]
used = set()
board = json.load(open(f"{ops}/grafana/workrow-dashboard.json"))
texts = [t["expr"] for p in board["panels"] for t in p["targets"]]
texts.append(board["templating"]["list"][1]["definition"])
# The rules' expressions only: their comments and annotations speak of SQL names too.
texts.extend(line for line in open(f"{ops}/prometheus/workrow-alerts.yml")
             if not line.lstrip().startswith(("#", "summary:", "description:")))
for text in texts:
    used.update(re.findall(r"\bworkrow_[a-z_]+", text))
exposed = set()
for line in open(scrape):
    if line.startswith("#"):
        continue
    match = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)", line)
    if match:
        exposed.add(match.group(1))
missing = sorted(name for name in used if name not in exposed)
print(f"{len(used)} metric names used, {len(used) - len(missing)} in the scrape")
for name in missing:
    print(f"missing: {name}")
sys.exit(1 if missing else 0)
PY
