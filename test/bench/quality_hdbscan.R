# HDBSCAN (the R package dbscan) for test/bench/quality.py:
#   Rscript quality_hdbscan.R ROWS.f64 DIMS OUT MINPTS...
# ROWS.f64: n x DIMS doubles, row-major, already z-scored by the caller.
# Writes OUT: for each minPts in turn, n int32 labels (0 = noise), and
# prints the seconds each took.
args <- commandArgs(trailingOnly = TRUE)
d <- as.integer(args[2])
con <- file(args[1], "rb")
v <- readBin(con, "double", n = file.info(args[1])$size / 8, endian = "little")
close(con)
x <- matrix(v, ncol = d, byrow = TRUE)
suppressPackageStartupMessages(library(dbscan))
out <- file(args[3], "wb")
for (mp in as.integer(args[4:length(args)])) {
  t <- system.time(h <- hdbscan(x, minPts = mp))[["elapsed"]]
  writeBin(as.integer(h$cluster), out, size = 4, endian = "little")
  cat(sprintf("minPts %d: %.2f s, %d clusters, %.3f noise\n", mp, t,
              length(unique(h$cluster[h$cluster > 0])), mean(h$cluster == 0)))
}
close(out)
