#!/usr/bin/env bash
# A real SLURM on this one machine, for the tests that run the allocation
# runner under srun and SlurmCluster under sbatch: Debian's slurmctld,
# slurmd and munge, one node named after this host, both daemons in the
# foreground of background jobs. Needs root and Debian's package archive.
#
#   bash scripts/slurm-local.sh start    # installs (once), configures, starts, waits for the node
#   bash scripts/slurm-local.sh stop
set -euo pipefail
state=/tmp/spillway-slurm
conf=/etc/slurm/slurm.conf

stop() {
  pkill -x slurmd 2>/dev/null || true
  pkill -x slurmctld 2>/dev/null || true
  # They save their state on the way out: give them a moment, then make sure.
  for _ in $(seq 1 50); do pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break; sleep 0.2; done
  for p in slurmctld slurmd slurmstepd; do pkill -9 -x "$p" 2>/dev/null || true; done
  pkill -x munged 2>/dev/null || true
  rm -rf "$state"
}

start() {
  [ "$(id -u)" = 0 ] || { echo "slurm-local: needs root" >&2; exit 1; }
  if ! command -v slurmctld >/dev/null || ! command -v srun >/dev/null || ! command -v munged >/dev/null; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
  fi
  stop
  mkdir -p "$state"/{ctld,spool,log} /etc/slurm /run/munge /var/log/munge /var/lib/munge /etc/munge
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
  chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge
  chmod 0700 /etc/munge
  chmod 0400 /etc/munge/munge.key
  runuser -u munge -- /usr/sbin/munged --force
  host=$(hostname -s)
  # At least 4 CPUs declared (slurmd told to trust the configuration), so a
  # job of 3 tasks of 1 CPU each fits on a 2-core machine as it would on a node.
  cpus=$(( $(nproc) > 4 ? $(nproc) : 4 ))
  mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
  cat > "$conf" <<CONF
ClusterName=spillway-ci
SlurmctldHost=$host
AuthType=auth/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
  slurmctld -D -c > "$state/log/slurmctld.out" 2>&1 &
  slurmd -D > "$state/log/slurmd.out" 2>&1 &
  for _ in $(seq 1 60); do
    if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
      echo "slurm-local: node $host up ($cpus CPUs, $mem MB)"
      return 0
    fi
    sleep 1
  done
  echo "slurm-local: the node did not come up" >&2
  tail -n 20 "$state"/log/* >&2 || true
  exit 1
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
