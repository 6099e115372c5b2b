#!/bin/bash
# Idle CPU of a 3-node weir cluster with 3,000 partitions, RF=3
# (docs/benchmarks.md "Idle CPU with 3,000 partitions, before and after
# fetch sessions").
#
# usage: bench/idlecpu/idle-cpu.sh BINARY WORKDIR [PERF_SECONDS]
#
# Starts three `weir serve` processes on loopback (random ports, every
# node a voter), creates 100 topics x 30 partitions (RF=3,
# min.insync.replicas=2) with `weir topics create`, waits 30 s, then
# reads utime+stime of each process from /proc/<pid>/stat over 30 s and
# prints each node's share of a core. With PERF_SECONDS > 0 it also runs
# `perf record -g` on each node for that long during the window (which
# adds to the figures). The processes are stopped at the end; WORKDIR is
# wiped first.
BIN=$1; W=$2; PERF=${3:-0}
rm -rf $W; mkdir -p $W
B=$((20000 + RANDOM % 20000))
JOIN="127.0.0.1:$((B+11)),127.0.0.1:$((B+12)),127.0.0.1:$((B+13))"
PIDS=()
for i in 1 2 3; do
  $BIN serve --node-id $i --data $W/d$i --listen 127.0.0.1:$((B+i)) --gossip-addr 127.0.0.1:$((B+10+i)) \
    --remote-addr 127.0.0.1:$((B+20+i)) --join $JOIN --voters 1,2,3 --log-level warn >$W/n$i.log 2>&1 &
  PIDS+=($!)
done
echo "${PIDS[@]}" > $W/pids
BR="127.0.0.1:$((B+1)),127.0.0.1:$((B+2)),127.0.0.1:$((B+3))"
sleep 5
for t in $(seq -w 0 99); do
  $BIN topics create --brokers $BR --topic scale-0$t --partitions 30 --replication-factor 3 --config min.insync.replicas=2 >/dev/null 2>&1 || echo "create $t failed"
done
echo "created $(date +%T)"
sleep 30
tick=$(getconf CLK_TCK)
declare -A b
for p in ${PIDS[@]}; do b[$p]=$(awk '{print $14+$15}' /proc/$p/stat); done
t0=$(date +%s.%N)
if [ "$PERF" != 0 ]; then
  for p in ${PIDS[@]}; do perf record -F 499 -g -p $p -o $W/perf.$p.data -- sleep $PERF >/dev/null 2>&1 & done
fi
sleep 30
t1=$(date +%s.%N)
for p in ${PIDS[@]}; do a=$(awk '{print $14+$15}' /proc/$p/stat); echo "pid $p cpu $(echo "scale=4; ($a-${b[$p]})/$tick/($t1-$t0)*100" | bc)%"; done
uptime
sleep 1
kill ${PIDS[@]}; wait
