#!/bin/bash
# grow.sh BIN PORT DUMP.rdb X1.jsonl X2.jsonl
#
# Whether the cost per document grows with the index, on a loaded machine:
# one redis-server (RT=1: SCHED_FIFO) started from DUMP.rdb (a namespace
# filled by measure.sh with SAVE) takes two slices that share no original
# with it (realtext -first), each into the filled database 0 and into the
# empty database 1, alternated (X1→1, X1→0, X2→0, X2→1), so that both
# sides see the same load. Prints neardup and redis-server CPU per
# document and the longest script call of each run. REDIS_ARGS are added
# to redis-server's arguments.
BIN=$1; PORT=$2; DUMP=$3; X1=$4; X2=$5
D=$(mktemp -d /tmp/realtext-grow.XXXX)
cp "$DUMP" $D/dump.rdb
${RT:+chrt -f 10} redis-server --port $PORT --save '' --appendonly no --dir $D --dbfilename dump.rdb --logfile $D/log --daemonize yes --slowlog-log-slower-than 0 --slowlog-max-len 100000 $REDIS_ARGS >/dev/null
R="redis-cli -p $PORT"
until [ "$($R ping 2>/dev/null)" = PONG ] && [ "$($R info persistence | grep -c '^loading:0')" = 1 ]; do sleep 0.5; done
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
echo "keys: $($R dbsize) in db 0"
for run in "$X1 1" "$X1 0" "$X2 0" "$X2 1"; do
  set -- $run
  n=$(wc -l < $1)
  $R slowlog reset >/dev/null
  c0=$(cpu)
  /usr/bin/time -f "%U %S" -o $D/time $BIN scan --profile web --http.addr '' --index redis://127.0.0.1:$PORT/$2 --emit all $1 > $D/events.$2.$(basename $1) 2>$D/err || { echo FAIL; tail $D/err; }
  c1=$(cpu)
  read u s < $D/time
  mx=$($R --json slowlog get 100000 | python3 -c 'import json,sys; l=json.load(sys.stdin); print(max([e[2] for e in l if e[3][0].lower()=="evalsha"] or [0]))')
  echo "$(basename $1) db=$2 docs=$n neardup_cpu_us/doc=$(awk "BEGIN{printf \"%.0f\", ($u+$s)*1e6/$n}") redis_cpu_us/doc=$(awk "BEGIN{printf \"%.0f\", ($c1-$c0)*1e6/$n}") longest_script_us=$mx"
done
$R shutdown nosave >/dev/null 2>&1
