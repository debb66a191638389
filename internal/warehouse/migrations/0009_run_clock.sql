-- The clock a run stores its times by (fetch: one clock rule): 'service' when the service's clock
-- agreed with the machine's within the bound (or the bound was raised to trust it), 'machine'
-- otherwise; clock_offset_ms is how far the service's clock was ahead of the machine's when the
-- run decided. A resumed run applies the same rule, so the same records validate the same way.
-- failure is what the run's last attempt failed with, digits folded: a build whose run fails
-- the same way twice is discarded rather than resumed into the same failure again.
ALTER TABLE sync_runs ADD COLUMN clock_source VARCHAR;
ALTER TABLE sync_runs ADD COLUMN clock_offset_ms BIGINT;
ALTER TABLE sync_runs ADD COLUMN failure VARCHAR;
