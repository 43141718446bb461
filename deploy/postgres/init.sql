-- Run once by the postgres image on first start (docker-entrypoint-initdb.d). The same roles that
-- `wagerail dev` provisions on its private cluster: an owner for migrations and a runtime role that
-- is neither superuser nor owner and cannot bypass row-level security.
CREATE ROLE wagerail_owner LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS PASSWORD 'owner-change-me';
CREATE ROLE wagerail_app LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS NOINHERIT PASSWORD 'app-change-me';
-- The cross-tenant path for platform admins and system jobs (internal/platform/crosstenant): no BYPASSRLS,
-- and wagerail_app is never granted membership in it.
CREATE ROLE wagerail_platform LOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOBYPASSRLS NOINHERIT PASSWORD 'platform-change-me';
CREATE DATABASE wagerail OWNER wagerail_owner;
-- Temporal's own databases (used by the temporal service in docker-compose.yml).
CREATE ROLE temporal LOGIN PASSWORD 'temporal-change-me' CREATEDB;
