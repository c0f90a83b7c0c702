#!/bin/bash
# delete.sh BIN PORT CORPUS.jsonl IDS [SCAN_FLAGS...]
#
# The cost of deletes: starts a fresh redis-server on PORT, fills it with
# `BIN scan` at the web defaults over CORPUS (SCAN_FLAGS added, e.g.
# --index.capacity 20000), then deletes the ids of the file IDS (one per
# line) with `BIN delete` and prints: the ids deleted, neardup CPU
# (rusage) and redis-server CPU (INFO cpu delta) per deleted document, the
# script calls of the delete, the longest and the count over 20 ms
# (SLOWLOG of every call), and the keys records' MEMORY USAGE per stored
# document before the delete (the k hashes). Compare builds by running it
# with each BIN in turn, alternated. RT=1 runs redis-server under
# SCHED_FIFO, so that on a loaded machine SLOWLOG durations are the
# scripts' own time, not time spent waiting for a core.
BIN=$1; PORT=$2; CORPUS=$3; IDS=$4; shift 4
D=$(mktemp -d /tmp/realtext-delete.XXXX)
${RT:+chrt -f 10} redis-server --port $PORT --save '' --appendonly no --dir $D --logfile $D/log --daemonize yes --slowlog-max-len 1000000 >/dev/null
sleep 0.5
R="redis-cli -p $PORT"
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
$BIN scan --profile web --http.addr '' --index redis://127.0.0.1:$PORT "$@" $CORPUS > /dev/null 2>$D/err || { echo FAIL scan; tail $D/err; }
n=$(wc -l < $CORPUS)
kb=$($R --scan --pattern '*}k*' | while read k; do $R memory usage "$k" samples 0; done | awk '{s+=$1} END{print s+0}')
$R config set slowlog-log-slower-than 0 >/dev/null; $R slowlog reset >/dev/null; $R config resetstat >/dev/null
c0=$(cpu)
/usr/bin/time -f "%U %S %e" -o $D/time $BIN delete --profile web --http.addr '' --index redis://127.0.0.1:$PORT "$@" --from $IDS > $D/deleted 2>$D/err || { echo FAIL delete; tail $D/err; }
c1=$(cpu)
read u s e < $D/time
m=$(grep -c '"kind":"deleted"' $D/deleted); nf=$(grep -c not_found $D/deleted)
calls=$($R info commandstats | awk -F'[=,]' '/cmdstat_evalsha:/{print $2}')
mx=$($R --json slowlog get 1000000 | python3 -c 'import json,sys; l=[e for e in json.load(sys.stdin) if e[3][0].lower()=="evalsha"]; print(max([e[2] for e in l] or [0]), sum(1 for e in l if e[2]>20000))')
echo "$(basename $BIN) fill=$n keys_records_B/doc=$((kb/n)) deleted=$m not_found=$nf neardup_cpu_us/del=$(awk "BEGIN{printf \"%.0f\", ($u+$s)*1e6/$m}") redis_cpu_us/del=$(awk "BEGIN{printf \"%.0f\", ($c1-$c0)*1e6/$m}") calls=$calls longest_us,>20ms=$mx wall=$e"
$R shutdown nosave >/dev/null 2>&1
rm -rf $D
