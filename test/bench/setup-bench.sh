#!/usr/bin/env bash
# What the benchmark needs beyond the test suite's packages
# (test/setup-debian.sh): R's dbscan for the quality section's HDBSCAN.
# Run as root on Debian 12; does nothing when it is present.
set -euo pipefail
if Rscript -e 'library(dbscan)' >/dev/null 2>&1; then
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    echo "missing R package dbscan: install r-cran-dbscan as root" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq r-cran-dbscan >/dev/null
