/*
 * wide_rows.c - embedding-like rows for the wide-row benchmark (wide_speed.py)
 *
 *   wide_rows ROWS DIMS CLUSTERS SEED > rows.tsv
 *
 * Writes COPY text, one row a line: id, the row as a real[] literal, its
 * cluster (1..CLUSTERS).  A row is a point of a 16-dimensional latent space
 * (a cluster's centre, drawn once, plus a small spread) mapped linearly to
 * DIMS dimensions, plus noise in every dimension, and normalised to unit
 * length, as sentence or image embeddings usually are.  Rows come in the
 * order of a seeded shuffle of the clusters, so a table's first rows are no
 * one cluster's.  Deterministic: the same arguments give the same bytes on
 * any machine (its own generator, printed with %.9g, which a float reads back
 * exactly).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef LATENT
#define LATENT 16
#endif
#define CENTRE_SPREAD 1.0		/* latent centres: N(0, 1) per coordinate */
#ifndef ROW_SPREAD
#define ROW_SPREAD 0.2			/* a row around its centre, in the latent space */
#endif
#define MAX_COSINE 0.25		/* between two centres */
#define NOISE 0.02				/* per output dimension, before normalising */

static uint64_t rng_state[4];

static uint64_t
rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

/* xoshiro256** */
static uint64_t
next_u64(void)
{
	uint64_t	result = rotl(rng_state[1] * 5, 7) * 9;
	uint64_t	t = rng_state[1] << 17;

	rng_state[2] ^= rng_state[0];
	rng_state[3] ^= rng_state[1];
	rng_state[1] ^= rng_state[2];
	rng_state[0] ^= rng_state[3];
	rng_state[2] ^= t;
	rng_state[3] = rotl(rng_state[3], 45);
	return result;
}

static void
seed_rng(uint64_t seed)
{
	/* splitmix64 fills the state */
	for (int i = 0; i < 4; i++)
	{
		uint64_t	z = (seed += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		rng_state[i] = z ^ (z >> 31);
	}
}

/* uniform in (0, 1) */
static double
uniform(void)
{
	return ((double) (next_u64() >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* standard normal, Box-Muller (one of the pair) */
static double
gauss(void)
{
	return sqrt(-2.0 * log(uniform())) * cos(6.283185307179586 * uniform());
}

int
main(int argc, char **argv)
{
	long		rows,
				dims,
				clusters;
	double	   *map,
			   *centres,
			   *x;
	float	   *out;

	if (argc != 5)
	{
		fprintf(stderr, "usage: wide_rows ROWS DIMS CLUSTERS SEED\n");
		return 2;
	}
	rows = atol(argv[1]);
	dims = atol(argv[2]);
	clusters = atol(argv[3]);
	if (rows < 1 || dims < 1 || dims > 100000 || clusters < 1 || clusters > 100000)
	{
		fprintf(stderr, "wide_rows: arguments out of range\n");
		return 2;
	}
	seed_rng(strtoull(argv[4], NULL, 10));
	map = malloc(sizeof(double) * dims * LATENT);
	centres = malloc(sizeof(double) * clusters * LATENT);
	x = malloc(sizeof(double) * dims);
	out = malloc(sizeof(float) * dims);
	if (!map || !centres || !x || !out)
		return 1;
	/* the map keeps lengths on average: entries N(0, 1/dims) */
	for (long i = 0; i < dims * LATENT; i++)
		map[i] = gauss() / sqrt((double) dims);
	/*
	 * The centres apart: one is drawn again while its cosine with an
	 * earlier one passes MAX_COSINE (random directions in 16 dimensions
	 * have cosines of about +-0.25, and some pair of twenty comes close)
	 */
	for (long c = 0; c < clusters; c++)
	{
		double	   *m = centres + c * LATENT;
		int			tries = 0;
		int			near;

		do
		{
			near = 0;
			for (int l = 0; l < LATENT; l++)
				m[l] = CENTRE_SPREAD * gauss();
			for (long o = 0; o < c && !near && tries < 10000; o++)
			{
				double		dot = 0,
							nm = 0,
							no = 0;

				for (int l = 0; l < LATENT; l++)
				{
					dot += m[l] * centres[o * LATENT + l];
					nm += m[l] * m[l];
					no += centres[o * LATENT + l] * centres[o * LATENT + l];
				}
				near = dot > MAX_COSINE * sqrt(nm * no);
			}
			tries++;
		} while (near);
	}

	for (long r = 0; r < rows; r++)
	{
		long		c = (long) (next_u64() % (uint64_t) clusters);
		double		z[LATENT];
		double		norm = 0;

		for (int l = 0; l < LATENT; l++)
			z[l] = centres[c * LATENT + l] + ROW_SPREAD * gauss();
		for (long j = 0; j < dims; j++)
		{
			double		s = NOISE * gauss();

			for (int l = 0; l < LATENT; l++)
				s += map[j * LATENT + l] * z[l];
			x[j] = s;
			norm += s * s;
		}
		norm = sqrt(norm);
		printf("%ld\t{", r + 1);
		for (long j = 0; j < dims; j++)
		{
			out[j] = (float) (x[j] / norm);
			printf(j ? ",%.9g" : "%.9g", (double) out[j]);
		}
		printf("}\t%ld\n", c + 1);
	}
	free(map);
	free(centres);
	free(x);
	free(out);
	return 0;
}
