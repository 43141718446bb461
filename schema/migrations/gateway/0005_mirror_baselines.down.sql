DROP TABLE IF EXISTS gateway.mirror_baselines;
