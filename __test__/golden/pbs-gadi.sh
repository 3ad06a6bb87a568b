#!/usr/bin/env bash

#PBS -N spillway-worker
#PBS -q normal
#PBS -P ab12
#PBS -l ncpus=48
#PBS -l mem=190GB
#PBS -l jobfs=200GB
#PBS -l storage=gdata/ab12+scratch/ab12
#PBS -l walltime=02:00:00
#PBS -o /scratch/ab12/me/logs
#PBS -e /scratch/ab12/me/logs
#PBS -l wd

module load nodejs/20
exec node /opt/spillway/bin/spillway.js worker --scheduler-file /scratch/ab12/me/logs/scheduler.json --max-workers 1 --threads-per-worker 48 --max-mem-gb 190 --reserve-mem-gb 0 --death-timeout 60 --lifetime 6900 --lifetime-stagger 150
