#!/usr/bin/env bash
# The distributed flock, end to end: three `tumbler node` members on this machine, and three loops of `tumbler run`
# thin clients that each add one to a shared counter file under one lock, while one member is killed with SIGKILL
# midway. The counter must come out exact: every increment read the value the one before wrote (a lost update would
# repeat a value), and it counts every run that succeeded.
#
#   scripts/flock-counter.sh            # uses ./tumbler; ports 7701-7703 (peers), 7711-7713 (clients), 7781-7783 (http)
#
# Environment (all optional): TUMBLER (the command that runs tumbler), FLOCK_DIR (work directory, kept; default a new
# temporary one), FLOCK_PORTS (nine ports: three peer, three client, three http), FLOCK_LOOPS (3), FLOCK_ITERATIONS
# (12 per loop), FLOCK_ALGORITHM (lease; any leased native algorithm). Exit 0 when every check holds.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TUMBLER=${TUMBLER:-$here/tumbler}
loops=${FLOCK_LOOPS:-3}
iterations=${FLOCK_ITERATIONS:-12}
algorithm=${FLOCK_ALGORITHM:-lease}
read -r -a ports <<< "${FLOCK_PORTS:-7701 7702 7703 7711 7712 7713 7781 7782 7783}"
if [ "${#ports[@]}" -ne 9 ]; then
  echo "flock-counter: FLOCK_PORTS needs nine ports (three peer, three client, three http), not: ${ports[*]}" >&2
  exit 2
fi
dir=${FLOCK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/tumbler-flock.XXXXXX")}
mkdir -p "$dir"
journal=$dir/counter
: > "$journal"

say() { printf '%s flock-counter: %s\n' "$(date +%H:%M:%S)" "$*"; }

# fresh credentials, in the environment only (never on a command line)
TUMBLER_SECRET=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
TUMBLER_CLIENT_SECRET=$(head -c 24 /dev/urandom | base64 | tr -d '/+=')
export TUMBLER_SECRET TUMBLER_CLIENT_SECRET

# short terms, so that a killed member's grants and its server role are taken over within seconds
cat > "$dir/cluster.conf" <<EOF
algorithm=$algorithm
leaseTime=2s
electionDelay=200ms
leaderLease=300ms
peerTimeout=5s
idleTimeout=2s
EOF

peer() { echo "127.0.0.1:${ports[$1]}"; }
client() { echo "127.0.0.1:${ports[$((3 + $1))]}"; }
http() { echo "${ports[$((6 + $1))]}"; }

pids=()
cleanup() {
  for p in "${pids[@]}"; do
    kill -9 "$p" 2>/dev/null
  done
  for p in "${loop_pids[@]:-}"; do
    kill "$p" 2>/dev/null
  done
}
trap cleanup EXIT

for i in 0 1 2; do
  others=()
  for j in 0 1 2; do
    [ "$j" -ne "$i" ] && others+=("$(peer "$j")")
  done
  TUMBLER_LISTEN=$(peer "$i") TUMBLER_PEERS=$(IFS=,; echo "${others[*]}") TUMBLER_CLIENT_LISTEN=$(client "$i") \
    TUMBLER_HTTP=127.0.0.1:$(http "$i") TUMBLER_LOG=$dir/node$i.log \
    $TUMBLER node --config "$dir/cluster.conf" > "$dir/node$i.out" 2>&1 &
  pids+=($!)
done
say "started members $(peer 0), $(peer 1), $(peer 2) (pids ${pids[*]}), clients at $(client 0), $(client 1), $(client 2); work in $dir"

# GET /health over bash's /dev/tcp: the status code, or nothing
health() {
  local code
  { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET /health HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
  read -r -t 5 _ code _ <&3
  exec 3<&-
  echo "$code"
}

# GET /metrics: the value of one gauge, or nothing
gauge() {
  local line value=""
  { exec 4<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
  printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&4
  while IFS= read -r -t 5 line <&4; do
    case "$line" in
      "$2 "*) value=${line#"$2 "} ;;
    esac
  done
  exec 4<&-
  echo "${value%$'\r'}"
}

deadline=$((SECONDS + 180))
for i in 0 1 2; do
  until [ "$(health "$(http "$i")")" = "200" ]; do
    if ! kill -0 "${pids[$i]}" 2>/dev/null || [ "$SECONDS" -ge "$deadline" ]; then
      say "member $i did not come up; its output:"
      tail -n 40 "$dir/node$i.out" "$dir/node$i.log" 2>/dev/null
      exit 1
    fi
    sleep 0.2
  done
done
say "all three members answer /health 200"

# the critical section: read the last value, write the next one; a second holder at once would repeat a value
# (the pause between the read and the write makes an overlap, were there one, a lost update almost surely)
increment="last=\$(tail -n 1 '$journal'); sleep 0.2; echo \$(( \${last:-0} + 1 )) >> '$journal'"

run_loop() {
  local loop=$1 first=$(( $1 % 3 )) members=() ok=0 failed=0 i rc
  for k in 0 1 2; do
    members+=("$(client $(( (first + k) % 3 )))")
  done
  local url="lock:native://$(IFS=,; echo "${members[*]}")?algorithm=$algorithm&leaseTime=2s&peerTimeout=5s&idleTimeout=2s"
  for ((i = 1; i <= iterations; i++)); do
    while :; do
      # a client holds the clients' credential only, never the members' secret
      env -u TUMBLER_SECRET $TUMBLER run --url "$url" --lock counter --wait 60s -- sh -c "$increment" \
        >> "$dir/loop$loop.out" 2>&1
      rc=$?
      if [ "$rc" -eq 0 ]; then
        ok=$((ok + 1))
        break
      fi
      failed=$((failed + 1))
      echo "iteration $i failed with exit $rc; again" >> "$dir/loop$loop.out"
      if [ "$failed" -gt 20 ]; then
        echo "loop $loop: $ok ok $failed failed" > "$dir/loop$loop.result"
        return 1
      fi
    done
  done
  echo "loop $loop: $ok ok $failed failed" > "$dir/loop$loop.result"
}

loop_pids=()
for ((l = 1; l <= loops; l++)); do
  run_loop "$l" &
  loop_pids+=($!)
done
total=$((loops * iterations))

# midway, kill a member with SIGKILL: no goodbye, its clients find out by the broken link
until [ "$(wc -l < "$journal")" -ge $((total / 3)) ]; do
  alive=0
  for p in "${loop_pids[@]}"; do
    kill -0 "$p" 2>/dev/null && alive=1
  done
  if [ "$alive" -eq 0 ] || [ "$SECONDS" -ge $((deadline + 300)) ]; then
    say "FAIL: no progress: $(wc -l < "$journal") increments"
    tail -n 20 "$dir"/loop*.out
    exit 1
  fi
  sleep 0.1
done
# the member that serves the most thin-client sessions right now (one that serves some)
victim=0
most=0
until [ "$most" -gt 0 ] || [ "$SECONDS" -ge $((deadline + 300)) ]; do
  for i in 0 1 2; do
    n=$(gauge "$(http "$i")" tumbler_client_sessions)
    sessions[$i]=${n:-?}
    if [ -n "$n" ] && [ "$n" -gt "$most" ]; then
      most=$n
      victim=$i
    fi
  done
  [ "$most" -gt 0 ] || sleep 0.1
done
say "$(wc -l < "$journal") of $total increments done; client sessions per member: ${sessions[*]};" \
  "killing member $(peer $victim), which serves $most, with SIGKILL"
kill -9 "${pids[$victim]}"
wait "${pids[$victim]}" 2>/dev/null

status=0
for p in "${loop_pids[@]}"; do
  wait "$p" || status=1
done
loop_pids=()

ok=0
failed=0
for ((l = 1; l <= loops; l++)); do
  read -r _ _ o _ f _ < "$dir/loop$l.result"
  ok=$((ok + o))
  failed=$((failed + f))
  say "$(cat "$dir/loop$l.result")"
done

count=$(wc -l < "$journal")
last=$(tail -n 1 "$journal")
expected=$(seq 1 "$count" | tr '\n' ' ')
actual=$(tr '\n' ' ' < "$journal")
say "counter: $last after $count increments; $ok runs succeeded, $failed failed (and were run again)"
if [ "$actual" != "$expected" ]; then
  say "FAIL: the counter is not 1..$count in order (a repeated value is a lost update: two holders at once)"
  status=1
fi
if [ "$ok" -ne "$total" ]; then
  say "FAIL: $ok of $total runs succeeded"
  status=1
fi
# every successful run added one; a run that failed may have added one before its lease was lost and it was stopped
if [ "$count" -lt "$ok" ] || [ "$count" -gt $((ok + failed)) ]; then
  say "FAIL: $count increments for $ok successful and $failed failed runs"
  status=1
fi

# the survivors stop gracefully (SIGTERM): they tell their clients, and exit
for i in 0 1 2; do
  [ "$i" -ne "$victim" ] && kill -TERM "${pids[$i]}" 2>/dev/null
done
for i in 0 1 2; do
  [ "$i" -eq "$victim" ] && continue
  wait "${pids[$i]}" 2>/dev/null
  rc=$? # 143: the JVM ends on SIGTERM after its shutdown hook, 128 + 15
  if [ "$rc" -ne 143 ] && [ "$rc" -ne 0 ] || ! grep -q "tumbler node $(peer "$i") stopped" "$dir/node$i.log"; then
    say "FAIL: member $(peer "$i") did not stop cleanly on SIGTERM (exit $rc)"
    status=1
  fi
done
pids=()
if [ "$status" -eq 0 ]; then
  say "OK: exact count $count with one member killed midway"
else
  for f in "$dir"/loop*.out "$dir"/node*.log; do
    echo "--- $f"
    tail -n 30 "$f"
  done
fi
exit "$status"
