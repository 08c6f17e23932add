#!/usr/bin/env bash
# Renames a single Redis's Moniro keys from the first layout
# (`<prefix>agent:<a>:…`, BullMQ under `<prefix-without-colon>:bull:`) to the
# hash-tagged one (`<prefix>{a:<a>}:…`, BullMQ under `…:{bull}:`); see
# docs/redis-keys.md. Stop every Moniro service first. Idempotent: keys
# already in the new layout are not matched, and a rename never overwrites
# (RENAMENX; a clash is reported and the old key kept).
#
# usage: hash-tag-layout.sh <prefix> [redis-cli connection options, e.g. -h host -p 6379 --user u --pass p]
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 <prefix (MONIRO_REDIS_PREFIX, e.g. moniro:)> [redis-cli options]" >&2
  exit 2
fi
prefix="$1"
shift
if [[ "$prefix" == *[{}*?\[\]]* ]]; then
  echo "the prefix '$prefix' may not contain braces or glob characters" >&2
  exit 2
fi
cli=(redis-cli "$@")
moved=0
clashes=0
skipped=0

rename() {
  local from="$1" to="$2"
  if [[ "$("${cli[@]}" RENAMENX "$from" "$to")" == "1" ]]; then
    moved=$((moved + 1))
  else
    echo "not moved (the new key exists): $from -> $to" >&2
    clashes=$((clashes + 1))
  fi
}

# Agent keys: `<prefix>agent:<agent>:<word>[:<rest>]`. Agent names have no ':'.
while IFS= read -r key; do
  [[ -z "$key" ]] && continue
  rest="${key#"${prefix}agent:"}"
  agent="${rest%%:*}"
  tail="${rest#*:}"
  word="${tail%%:*}"
  tag="${prefix}{a:${agent}}"
  case "$word" in
    inbox | lease | epoch | state | memory | notes | todo | process-executors)
      rename "$key" "${tag}:${tail}"
      ;;
    thread)
      # The old layout could not tell `thread:<ctx>:meta` from a thread whose context ends in ':meta';
      # the key's type can: a stream is a thread, a hash its meta, a set its envelope ids.
      context="${tail#thread:}"
      case "$("${cli[@]}" TYPE "$key")" in
        stream) rename "$key" "${tag}:thread:${context}" ;;
        hash) rename "$key" "${tag}:thread-meta:${context%:meta}" ;;
        set) rename "$key" "${tag}:thread-envelopes:${context%:envelopes}" ;;
        *)
          echo "skipped (unexpected type): $key" >&2
          skipped=$((skipped + 1))
          ;;
      esac
      ;;
    *)
      echo "skipped (unknown key): $key" >&2
      skipped=$((skipped + 1))
      ;;
  esac
done < <("${cli[@]}" --scan --pattern "${prefix}agent:*")

# The scheduler's BullMQ queue: `<base>:bull:<queue>:…` -> `<base>:{bull}:<queue>:…`.
base="${prefix%:}"
while IFS= read -r key; do
  [[ -z "$key" ]] && continue
  rename "$key" "${base}:{bull}:${key#"${base}:bull:"}"
done < <("${cli[@]}" --scan --pattern "${base}:bull:*")

echo "moved ${moved} keys, ${clashes} clashes, ${skipped} skipped"
[[ $clashes -eq 0 && $skipped -eq 0 ]]
