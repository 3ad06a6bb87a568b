#!/usr/bin/env bash

#SBATCH -J spillway-worker
#SBATCH -e /scratch/ab12/me/logs/spillway-worker-%J.err
#SBATCH -o /scratch/ab12/me/logs/spillway-worker-%J.out
#SBATCH -p work
#SBATCH -A ab12
#SBATCH -n 1
#SBATCH --cpus-per-task=8
#SBATCH --mem=32768M
#SBATCH -t 02:00:00
#SBATCH --qos=normal

module load nodejs/20
exec node /opt/spillway/bin/spillway.js worker --scheduler-file /scratch/ab12/me/logs/scheduler.json --max-workers 2 --threads-per-worker 4 --max-mem-gb 32 --reserve-mem-gb 0 --death-timeout 60 --lifetime 6900 --lifetime-stagger 150
