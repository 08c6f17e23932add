#!/usr/bin/env bash
# Makes sure NATS (with JetStream) answers on 127.0.0.1:4222 and Redis on
# 127.0.0.1:6379, installing them from Debian's packages and starting them
# when needed (the team's ENVIRONMENT.md, beside this repository), and that bubblewrap (the exec sandbox, which
# the tool-executor requires) is installed. Idempotent.
set -uo pipefail

answers() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
apt_updated=0
install() {
  if [ "$apt_updated" = 0 ]; then apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@"
}
wait_for() {
  for _ in $(seq 1 50); do answers "$1" && return 0; sleep 0.2; done
  return 1
}

command -v nats-server >/dev/null || [ -x /usr/sbin/nats-server ] || install nats-server
command -v redis-server >/dev/null || install redis-server
command -v bwrap >/dev/null || install bubblewrap

if ! answers 4222; then
  echo "starting nats-server on 127.0.0.1:4222"
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
    -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  wait_for 4222 || { echo "nats-server did not start"; exit 1; }
fi
if ! answers 6379; then
  echo "starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
  wait_for 6379 || { echo "redis-server did not start"; exit 1; }
fi
echo "NATS 127.0.0.1:4222 and Redis 127.0.0.1:6379 answer"
