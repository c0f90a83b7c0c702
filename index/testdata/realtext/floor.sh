#!/bin/bash
# floor.sh [OPS_PER_DOC] [PORT]
#
# The least redis-server CPU a document's bucket operations can cost on
# this machine: plain pipelined commands (redis-benchmark -P 64), no
# script, no reads of records, into hashes of random fields across 2^20
# keys (the grouping of the bucket tables). A page of the web profile
# brings about OPS_PER_DOC (default 70: 30 bands and ~40 passage
# anchors) bucket operations; each costs at least one HSETNX (a new
# bucket) or one HGET (an existing one). Prints redis-server CPU per
# operation (INFO cpu delta over 2,000,000 operations, twice) and the
# floor per document.
OPS=${1:-70}; PORT=${2:-16397}
D=$(mktemp -d /tmp/floor.XXXX)
redis-server --port $PORT --save '' --appendonly no --dir $D --logfile $D/log --daemonize yes >/dev/null
R="redis-cli -p $PORT"
until [ "$($R ping 2>/dev/null)" = PONG ]; do sleep 0.2; done
cpu() { $R info cpu | awk -F: '/used_cpu_(sys|user):/{s+=$2} END{printf "%.3f", s}'; }
N=2000000
for cmd in HSETNX HGET HSETNX HGET; do
  c0=$(cpu)
  if [ $cmd = HSETNX ]; then
    redis-benchmark -p $PORT -r 1048576 -n $N -P 64 --csv HSETNX 'g:__rand_int__' '__rand_int__' 'xxxxxx' >/dev/null
  else
    redis-benchmark -p $PORT -r 1048576 -n $N -P 64 --csv HGET 'g:__rand_int__' '__rand_int__' >/dev/null
  fi
  c1=$(cpu)
  awk -v c0=$c0 -v c1=$c1 -v n=$N -v ops=$OPS -v cmd=$cmd -v keys=$($R dbsize) 'BEGIN{u=(c1-c0)*1e6/n; printf "%-6s %.2f µs of redis-server CPU per command (%d keys); %d per document: %.0f µs\n", cmd, u, keys, ops, u*ops}'
done
$R shutdown nosave >/dev/null 2>&1
rm -rf $D
