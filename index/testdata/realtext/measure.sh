#!/bin/bash
# measure.sh BIN PORT SLICE.jsonl [SLICE.jsonl...]
#
# Starts a fresh redis-server on PORT (RT=1: under SCHED_FIFO, so that on a
# loaded machine SLOWLOG durations are the script's own time, not time
# spent waiting for a core), runs `BIN scan` at the web defaults over each
# slice in turn into one namespace, and prints per slice: neardup CPU
# (rusage) and redis-server CPU (INFO cpu delta) per document, SLOWLOG
# calls over 5 ms, the longest and the count over 20 ms, used_memory per
# stored document so far, and the commands the scripts ran. Then the
# number of "Slow script" lines in the server log. REDIS_ARGS are added to
# redis-server's arguments (e.g. "--disable-thp no"). SAVE=DIR writes the
# final dataset to DIR/dump.rdb.
BIN=$1; PORT=$2; shift 2
D=$(mktemp -d /tmp/realtext-redis.XXXX)
${RT:+chrt -f 10} redis-server --port $PORT --save '' --appendonly no --dir $D --logfile $D/log --daemonize yes --slowlog-log-slower-than 5000 --slowlog-max-len 100000 $REDIS_ARGS >/dev/null
sleep 0.5
R="redis-cli -p $PORT"
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
mem() { $R info memory | awk -F: '/^used_memory:/{print $2+0}'; }
m0=$(mem)
total=0
for f in "$@"; do
  n=$(wc -l < $f)
  c0=$(cpu); $R config resetstat >/dev/null
  /usr/bin/time -f "%U %S %e" -o $D/time $BIN scan --profile web --http.addr '' --index redis://127.0.0.1:$PORT --emit all $f > $D/events.$(basename $f) 2>$D/err || { echo FAIL; tail $D/err; }
  c1=$(cpu)
  read u s e < $D/time
  total=$((total+n))
  sl=$($R slowlog len)
  mx=$($R --json slowlog get 100000 | python3 -c 'import json,sys; l=json.load(sys.stdin); print(max([e[2] for e in l] or [0]), sum(1 for e in l if e[2]>20000))')
  $R slowlog reset >/dev/null
  echo "$f docs=$n neardup_cpu_us/doc=$(awk "BEGIN{printf \"%.0f\", ($u+$s)*1e6/$n}") redis_cpu_us/doc=$(awk "BEGIN{printf \"%.0f\", ($c1-$c0)*1e6/$n}") wall=$e slow>5ms=$sl max_us,>20ms=$mx used_mem_per_doc=$(( ($(mem)-m0)/total ))"
  $R info commandstats | grep -E 'evalsha|hsetnx|cmdstat_hget:|cmdstat_hset:' | sed "s/^/   /"
  $R info cpu | grep -E 'used_cpu_(sys|user):' | tr '\n' ' '; echo
done
[ -n "$SAVE" ] && $R save >/dev/null && cp $D/dump.rdb $SAVE/
$R slowlog get 5 | head -40 > $D/slowlog
grep -c 'Slow script' $D/log
echo dir=$D
$R shutdown nosave >/dev/null 2>&1
