-- m3eval sample --active draws turns with unequal chances (more where the judge is less
-- certain) and records each drawn turn's inclusion probability, so that m3eval estimate
-- --sample can weight each label by its inverse. NULL for stratified samples.
ALTER TABLE sample_turns ADD COLUMN inclusion_probability REAL;
