REVOKE ALL ON gateway.transfers FROM wagerail_platform;
REVOKE EXECUTE ON FUNCTION gateway.current_tenant() FROM wagerail_platform;
REVOKE USAGE ON SCHEMA gateway FROM wagerail_platform;
DROP TABLE IF EXISTS gateway.transfers;
DROP FUNCTION IF EXISTS gateway.transfers_guard();
DROP FUNCTION IF EXISTS gateway.transfer_status_follows(text, text);
DROP FUNCTION IF EXISTS gateway.cross_tenant();
