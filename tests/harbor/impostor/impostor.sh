#!/bin/sh
# An impostor interpreter: records that it was run, then fails. A rollout
# must use the runtimes it carries, never the image's python3/node.
printf '%s %s\n' "$0" "$*" >> /var/log/shforge-impostors.log
exit 97
