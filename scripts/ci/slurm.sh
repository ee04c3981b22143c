#!/bin/sh
# slurm.sh makes sure this machine has a one-node Slurm cluster for the slurm backend's tests:
# Debian's slurm-wlm and munge installed from apt if missing, munged, slurmctld and slurmd
# started on 127.0.0.1 with a configuration of their own under $JIKKEN_SLURM_DIR (default
# /var/lib/jikken-test/slurm, which the slurm user can reach, unlike root's home), and four
# GPUs backed by dummy device files so GPU requests are scheduled (nothing can run on them:
# there are no GPUs here). Where the machine lets it make cgroup v1 memory groups, jobs are
# held to their memory by Slurm's task/cgroup plugin, so a job over its --mem ends
# OUT_OF_MEMORY as on a real cluster; elsewhere memory is not enforced (and the OOM test
# skips). It prints the path of slurm.conf last; the tests read it from SLURM_CONF. Running it
# again reuses daemons that still answer. JIKKEN_SLURM_PORT (default 6817, and the next port
# for slurmd) lets a second cluster run next to the first, with a folder of its own.
#
#   export SLURM_CONF=$(scripts/ci/slurm.sh | tail -n 1)     (as root)
#   scripts/ci/slurm.sh stop
set -eu

say() { echo "scripts/ci/slurm.sh: $*" >&2; }
D=${JIKKEN_SLURM_DIR:-/var/lib/jikken-test/slurm}
port=${JIKKEN_SLURM_PORT:-6817}
conf=$D/slurm.conf

stop() {
	# Reverse order of start, by the pids the daemons wrote.
	for f in "$D/slurmd.pid" "$D/slurmctld.pid"; do
		[ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null || true
	done
}
if [ "${1:-}" = stop ]; then
	stop
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	say "the daemons need root (slurmd runs jobs as their users); run as root"
	exit 1
fi
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
	say "installing slurm-wlm and munge"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge >/dev/null
fi

# munge: the package made a key; munged only needs its run folder (no init system here).
if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
	mkdir -p /run/munge && chown munge:munge /run/munge
	runuser -u munge -- /usr/sbin/munged
	i=0
	until munge -n 2>/dev/null | unmunge >/dev/null 2>&1; do
		i=$((i + 1)); [ "$i" -lt 50 ] || { say "munged does not answer"; exit 1; }
		sleep 0.1
	done
fi

host=$(hostname)
getent hosts "$host" >/dev/null 2>&1 || echo "127.0.0.1 $host" >> /etc/hosts

export SLURM_CONF=$conf
if [ -f "$conf" ] && sinfo -h >/dev/null 2>&1 && scontrol ping 2>/dev/null | grep -q UP; then
	say "slurm already answers"
	echo "$conf"
	exit 0
fi
stop
mkdir -p "$D/state" "$D/spool" "$D/gpu"
# Slurm wants character devices; these behave as /dev/null.
for i in 0 1 2 3; do
	[ -c "$D/gpu/nvidia$i" ] || { rm -f "$D/gpu/nvidia$i"; mknod "$D/gpu/nvidia$i" c 1 3; }
done
for f in slurmctld.log slurmd.log; do : > "$D/$f"; done
rm -f "$D/slurmctld.pid" "$D/slurmd.pid"
chown -R slurm:slurm "$D/state" "$D/slurmctld.log"
chown slurm:slurm "$D"
# Memory limits need Slurm's cgroup plugins; 22.05's cgroup v2 support wants systemd, which a
# container lacks, so only a writable cgroup v1 memory hierarchy is used.
task=task/none proctrack=proctrack/linuxproc
probe=/sys/fs/cgroup/memory/jikken-probe-$$
if mkdir "$probe" 2>/dev/null; then
	rmdir "$probe"
	task=task/cgroup proctrack=proctrack/cgroup
	printf '%s\n' CgroupPlugin=cgroup/v1 ConstrainRAMSpace=yes ConstrainSwapSpace=yes > "$D/cgroup.conf"
else
	rm -f "$D/cgroup.conf"
	say "no writable cgroup v1 memory hierarchy: jobs are not held to their memory"
fi
# More CPUs than the machine has (config_overrides) so a matrix's trials run side by side; the
# tests' trials mostly sleep.
cat > "$conf" <<EOF
ClusterName=jikken
SlurmctldHost=$host(127.0.0.1)
AuthType=auth/munge
CryptoType=crypto/munge
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
SlurmUser=slurm
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$D/state
SlurmdSpoolDir=$D/spool
SlurmctldPidFile=$D/slurmctld.pid
SlurmdPidFile=$D/slurmd.pid
SlurmctldLogFile=$D/slurmctld.log
SlurmdLogFile=$D/slurmd.log
SlurmdParameters=config_overrides
ProctrackType=$proctrack
TaskPlugin=$task
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
MpiDefault=none
ReturnToService=2
KillWait=5
MinJobAge=600
DefMemPerCPU=256
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=16 RealMemory=16000 Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
cat > "$D/gres.conf" <<EOF
Name=gpu File=$D/gpu/nvidia[0-3]
EOF
/usr/sbin/slurmctld
/usr/sbin/slurmd
i=0
until sinfo -h -o %T 2>/dev/null | grep -q idle; do
	i=$((i + 1))
	if [ "$i" -ge 100 ]; then
		say "the node did not become idle:"; sinfo >&2 || true; tail -n 20 "$D/slurmctld.log" "$D/slurmd.log" >&2
		exit 1
	fi
	sleep 0.2
done
say "slurm is up (sinfo: $(sinfo -h -o '%P %T %N'))"
echo "$conf"
