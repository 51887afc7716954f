#!/usr/bin/env bash
# Installs what svclust needs to build and test on Debian 12: a compiler,
# PostgreSQL 15 with its server headers, valgrind, scikit-learn for the
# CVI cross-check, chromium and PIL to render and check svc_plot_svg's pictures,
# and pg_cron for the scheduled-refresh test.  Run as root; does nothing for
# packages already present.
set -euo pipefail

need=()
for pkg in build-essential postgresql-15 postgresql-server-dev-15 valgrind \
           python3 python3-numpy python3-sklearn python3-pil chromium postgresql-15-cron; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
done
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "missing packages: ${need[*]}; run this script as root (or install them)" >&2
    exit 1
fi
echo "installing: ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
