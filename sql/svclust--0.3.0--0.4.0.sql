-- svclust 0.3.0 to 0.4.0
\echo Use "ALTER EXTENSION svclust UPDATE TO '0.4.0'" to load this file. \quit
