module example.com/statsbatch

go 1.19
