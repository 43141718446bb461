ALTER TABLE app.bnpl_merchant_callbacks DROP COLUMN IF EXISTS occurred_at;
