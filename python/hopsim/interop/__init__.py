"""The seed simulators' files (HPCC's, Floodgate's and BFC's ns-3 programs): scenarios imported from
their configurations, runs exported as their outputs, and flow completion times compared. One
subpackage per simulator over the shared ns-3 config reader (`ns3_config`) and FCT row (`fct`)."""
