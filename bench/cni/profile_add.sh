#!/usr/bin/env bash
# Where a sluice-cni ADD spends its time: runs N ADDs against a private
# sluiced under strace (plugin side: exec, IPAM delegate, record, AddPort
# call, exit; sluiced side: the AddPort handler, its checkpoint syscalls) and
# prints the median of each phase. strace slows every syscall, so read the
# shares, not the absolute figures. Root; after a build (BUILD=dir).
# Usage: bench/cni/profile_add.sh [N] [extra sluiced flags...]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${BUILD:-$root/build}
n=${1:-20}
shift || true
work=$(mktemp -d /tmp/sluice-cniprof.XXXXXX)
sd_pid=
cleanup() {
  set +e
  [[ -n $sd_pid ]] && kill "$sd_pid" 2>/dev/null && wait "$sd_pid" 2>/dev/null
  [[ -n ${KEEP:-} ]] || rm -rf "$work"
}
trap cleanup EXIT
"$build/dataplane/sluiced" --api-socket "$work/api.sock" --socket-dir "$work/vhost" --state-dir "$work/state" \
  --pod-cidr 10.250.0.0/24 --main-core 0 --pmd-cores 1 --mbufs 16384 \
  --eal "--no-huge --no-pci -m 512 --no-shconf --file-prefix=cniprof-$$" "$@" 2>"$work/sluiced.log" &
sd_pid=$!
for _ in $(seq 100); do [[ -S $work/api.sock ]] && break; sleep 0.1; done
cat >"$work/conf.json" <<JSON
{"cniVersion":"1.0.0","name":"prof","type":"sluice-cni","apiSocket":"$work/api.sock","socketDir":"$work/vhost",
 "dataDir":"$work/records","ipam":{"type":"host-local","dataDir":"$work/ipam","ranges":[[{"subnet":"10.250.0.0/24"}]]}}
JSON
strace -f -tt -p "$sd_pid" -e trace=accept4,sendmsg,recvmsg,fdatasync,fsync,rename -o "$work/sluiced.strace" &
st_pid=$!
sleep 1
for i in $(seq "$n"); do
  env -i CNI_COMMAND=ADD CNI_CONTAINERID="prof$i" CNI_NETNS=/var/run/netns/none CNI_IFNAME=net1 \
    CNI_PATH=/usr/lib/cni PATH=/usr/bin:/bin \
    strace -f -tt -e trace=execve,exit_group,connect,write -o "$work/add$i.strace" \
    "$build/cni-plugin/sluice-cni" <"$work/conf.json" >/dev/null 2>&1
  env -i CNI_COMMAND=DEL CNI_CONTAINERID="prof$i" CNI_NETNS=/var/run/netns/none CNI_IFNAME=net1 \
    CNI_PATH=/usr/lib/cni PATH=/usr/bin:/bin "$build/cni-plugin/sluice-cni" <"$work/conf.json" >/dev/null 2>&1
done
sleep 1
kill "$st_pid" 2>/dev/null; wait "$st_pid" 2>/dev/null || true
python3 - "$work" "$n" <<'PY'
import re, statistics, sys
work, n = sys.argv[1], int(sys.argv[2])
def t(line):
    h, m, s = line.split()[1].split(':')
    return (int(h) * 3600 + int(m) * 60 + float(s)) * 1000
phases = {k: [] for k in ('start (exec to IPAM exec)', 'IPAM delegate', 'record + connect', 'AddPort call',
                          'result to exit', 'total')}
skipped = 0
for i in range(1, n + 1):
  try:
    lines = [l for l in open(f'{work}/add{i}.strace') if 'resumed>' not in l]
    main = lines[0].split()[0]
    t0 = t(lines[0])
    ipam_exec = next(t(l) for l in lines if 'execve("/usr/lib/cni/' in l)
    ipam_pid = next(l.split()[0] for l in lines if 'execve("/usr/lib/cni/' in l)
    ipam_exit = next(t(l) for l in lines if l.split()[0] == ipam_pid and 'exit_group' in l)
    conn = next(t(l) for l in lines if l.split()[0] == main and 'connect(' in l and 'api.sock' in l)
    log = next(t(l) for l in lines if l.split()[0] == main and 'added port' in l)
    end = t([l for l in lines if l.split()[0] == main and 'exit_group' in l][-1])
    for k, v in zip(phases, (ipam_exec - t0, ipam_exit - ipam_exec, conn - ipam_exit, log - conn, end - log, end - t0)):
        phases[k].append(v)
  except StopIteration:
    skipped += 1  # a call that failed or whose trace lacks a phase
if skipped: print(f'{skipped} of {n} traces skipped')
for k, v in phases.items():
    print(f'plugin {k:28s} median {statistics.median(v):7.2f} ms')
# sluiced: from the request's arrival to the response headers, and its checkpoint syscalls.
lines = [l for l in open(f'{work}/sluiced.strace') if 'EAGAIN' not in l and 'resumed>' not in l]
handler, sync = [], []
start = None
for l in lines:
    if 'recvmsg(' in l and 'PRI * HTTP' in l: start = None
    if 'recvmsg(' in l and '"\\0\\0' in l and start is None and 'api.sock' not in l: start = t(l)
    m = re.search(r'(fdatasync|fsync|rename)\(', l)
    if m and start is not None: sync.append(t(l))
    if 'sendmsg(' in l and 'content-type' in l and start is not None:
        handler.append(t(l) - start); start = None
if handler: print(f'sluiced AddPort/DeletePort handler         median {statistics.median(handler):7.2f} ms (n={len(handler)})')
PY
