#!/bin/sh
# docker.sh makes sure this machine can run the docker backend's tests: a Docker engine that
# answers (started if installed but stopped, docker.io installed from apt if missing) and
# busybox-static, which the tests copy into scratch images since no registry is reachable.
# It exits non-zero, saying why, when the engine cannot be brought up.
#
#   scripts/ci/docker.sh        (as root, or with sudo available)
set -eu

say() { echo "scripts/ci/docker.sh: $*" >&2; }
as_root() {
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}
apt_install() {
	say "installing $*"
	if [ -z "${apt_updated:-}" ]; then
		as_root apt-get update -qq >/dev/null
		apt_updated=1
	fi
	DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "$@" >/dev/null
}
engine_up() { docker version >/dev/null 2>&1; }

if ! command -v dockerd >/dev/null 2>&1 && [ ! -x /usr/sbin/dockerd ]; then
	apt_install docker.io
fi
if ! command -v docker >/dev/null 2>&1; then
	apt_install docker.io
fi
command -v busybox >/dev/null 2>&1 || apt_install busybox-static

if ! engine_up; then
	say "docker engine not answering; starting it"
	as_root service docker start >/dev/null 2>&1 || as_root systemctl start docker >/dev/null 2>&1 || true
	i=0
	while ! engine_up && [ "$i" -lt 20 ]; do sleep 0.5; i=$((i + 1)); done
fi
if ! engine_up; then
	# No init system that knows dockerd (containers, minimal VMs): run it in the background.
	say "no service manager started it; running dockerd in the background (log /var/log/dockerd.log)"
	as_root sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
	i=0
	while ! engine_up && [ "$i" -lt 120 ]; do sleep 0.5; i=$((i + 1)); done
fi
if ! engine_up; then
	say "the docker engine could not be started; see /var/log/dockerd.log or 'service docker status'"
	docker version >&2 || true
	exit 1
fi
say "docker engine $(docker version -f '{{.Server.Version}} (API {{.Server.APIVersion}})')"
