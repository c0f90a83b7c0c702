#!/bin/bash
# sites.sh BIN PORT WITH.jsonl WITHOUT.jsonl [ROUNDS]
#
# Issue 22's cost case (docs/boilerplate.md, "Cost"): Redis CPU per
# document and the longest script call on a stream whose pages carry
# their sites' templates (WITH, e.g. sites.jsonl of `neardup eval sites
# --write DIR`) and on the same pages without them (WITHOUT,
# sites-html.jsonl), alternated ROUNDS times (default 2), each run on a
# fresh redis-server (RT=1: under SCHED_FIFO) with slowlog-log-slower-than
# 0. Prints per run: redis-server CPU (INFO cpu delta) per document, the
# longest EVALSHA, the 99th percentile of the EVALSHAs' durations, the
# script calls, and the neardup CPU per document.
BIN=$1; PORT=$2; WITH=$3; WITHOUT=$4; ROUNDS=${5:-2}
D=$(mktemp -d /tmp/realtext-sites.XXXX)
R="redis-cli -p $PORT"
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
for round in $(seq $ROUNDS); do
  for f in "$WITH" "$WITHOUT"; do
    ${RT:+chrt -f 10} redis-server --port $PORT --save '' --appendonly no --dir $D --logfile $D/log --daemonize yes --slowlog-log-slower-than 0 --slowlog-max-len 1000000 >/dev/null
    until [ "$($R ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
    n=$(wc -l < $f)
    c0=$(cpu)
    /usr/bin/time -f "%U %S" -o $D/time $BIN scan --http.addr '' --index redis://127.0.0.1:$PORT --emit all $f > $D/events 2>$D/err || { echo FAIL; tail $D/err; }
    c1=$(cpu)
    read u s < $D/time
    read mx p99 calls < <($R --json slowlog get 1000000 | python3 -c 'import json,sys; d=sorted(e[2] for e in json.load(sys.stdin) if e[3][0].lower()=="evalsha") or [0]; print(d[-1], d[min(len(d)-1, int(0.99*len(d)))], len(d))')
    echo "$(basename $f) docs=$n redis_cpu_us/doc=$(awk "BEGIN{printf \"%.0f\", ($c1-$c0)*1e6/$n}") longest_script_us=$mx p99_script_us=$p99 script_calls=$calls neardup_cpu_us/doc=$(awk "BEGIN{printf \"%.0f\", ($u+$s)*1e6/$n}")"
    $R shutdown nosave >/dev/null 2>&1
    sleep 0.3
  done
done
