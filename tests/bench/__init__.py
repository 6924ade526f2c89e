"""Tests of the benchmark lab (bench/): marked `bench`; the suite also starts PostgreSQL."""
