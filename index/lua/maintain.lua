-- luaMaintain runs the expiry sweep with the budget of ARGV[5] and reports
-- 1 when no closed generation is left without expiry.
if SWEPT then return 1 end
return 0
