module example.com/parcels

go 1.19
