-- Faster number and time parsing: a canonical integer ("123", "-7", 1741064767123)
-- is recognised by a plain cast round trip, which is several times cheaper than
-- the regular expressions; everything else takes the 0001 path unchanged, so
-- every value parses exactly as before.

CREATE OR REPLACE MACRO bs_int(s) AS
    CASE
        WHEN TRY_CAST(s AS BIGINT)::VARCHAR = s THEN TRY_CAST(s AS BIGINT)
        ELSE TRY_CAST(regexp_extract(s, '^\s*(-?\d+)(\.0*)?\s*$', 1) AS BIGINT)
    END;

CREATE OR REPLACE MACRO bs_ts(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN TRY_CAST(s AS BIGINT)::VARCHAR = s THEN make_timestamptz(TRY_CAST(s AS BIGINT) * 1000)
        WHEN regexp_full_match(s, '\s*-?\d+(\.0*)?\s*') THEN make_timestamptz(bs_int(s) * 1000)
        WHEN regexp_matches(s, '([zZ]|[+-]\d\d(:?\d\d)?)\s*$') THEN TRY_CAST(s AS TIMESTAMPTZ)
        ELSE timezone('UTC', TRY_CAST(s AS TIMESTAMP))
    END;
