#!/bin/bash
# vsbase.sh CORPUS.jsonl BIN... 
#
# The same stream through `BIN scan --index redis://` for each binary, on
# one redis-server emptied before each run (FLUSHALL), two rounds
# alternated (A B … A B …), so that binaries built from different commits
# are compared under the same machine and load. Prints per run neardup
# CPU (rusage) and redis-server CPU (INFO cpu delta) per document, both,
# the events written and Redis commands per document (INFO commandstats).
# Use it to compare a commit with an older one on the same day: figures
# measured on other days are not comparable (the machine's speed varies
# by several times; docs/performance.md).
C=$1; shift
PORT=${PORT:-16399}
D=$(mktemp -d /tmp/vsbase.XXXX)
redis-server --port $PORT --save '' --appendonly no --dir $D --daemonize yes --logfile $D/log >/dev/null
R="redis-cli -p $PORT"
until [ "$($R ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
n=$(wc -l < $C)
for round in 1 2; do
  for b in "$@"; do
    $R flushall >/dev/null
    $R config resetstat >/dev/null
    c0=$(cpu)
    /usr/bin/time -f "%U %S" -o $D/time $b scan --profile web --http.addr '' --index redis://127.0.0.1:$PORT/0 --emit all $C > $D/events 2>$D/err || { echo "FAIL $b"; tail -3 $D/err; }
    c1=$(cpu)
    read u s < $D/time
    cmds=$($R info commandstats | awk -F'[=,:]' '/calls=/{s+=$3} END{print s}')
    awk -v b="$b" -v r=$round -v u=$u -v s=$s -v c0=$c0 -v c1=$c1 -v n=$n -v ev=$(wc -l < $D/events) -v cmds=$cmds 'BEGIN{a=(u+s)*1e6/n; c=(c1-c0)*1e6/n; printf "%s round %d: neardup %.0f µs/doc, redis-server %.0f µs/doc, both %.0f; %d events, %.1f Redis commands/doc\n", b, r, a, c, a+c, ev, cmds/n}'
  done
done
$R shutdown nosave >/dev/null 2>&1
rm -rf $D
