-- bs_dec gets a fast path. Casting text to DECIMAL(20,4) goes through a 128-bit
-- decimal and was the most expensive step of parsing credit records (about
-- 4.5 µs a value here, 40 times a DECIMAL(18,4) cast). Values with up to 14
-- integer digits take the 64-bit cast, wider ones the 128-bit cast as before;
-- both round to four decimals alike, so every value keeps its result.
CREATE OR REPLACE MACRO bs_dec(s) AS
    coalesce(TRY_CAST(trim(s) AS DECIMAL(18,4))::DECIMAL(20,4), TRY_CAST(trim(s) AS DECIMAL(20,4)));
