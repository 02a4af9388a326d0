//! `mpirun -n 2 target/debug/examples/mpi-hello`: each rank says who it
//! is, rank 0 gathers the names and prints them.

fn main() -> Result<(), dbio_mpi::MpiError> {
    let Some(world) = dbio_mpi::World::from_env()? else {
        println!("not started by mpirun");
        return Ok(());
    };
    world.barrier()?;
    let me = format!(
        "rank {} of {} on {}",
        world.rank(),
        world.size(),
        dbio_mpi::host_name()
    );
    if let Some(all) = world.gather_bytes(me.as_bytes())? {
        for a in all {
            println!("{}", String::from_utf8_lossy(&a));
        }
    }
    let any = world.any(world.rank() == 1)?;
    let max = world.max_u8(world.rank() as u8 * 3)?;
    let from_root =
        world.broadcast_bytes(format!("hello from rank {}", world.rank()).as_bytes())?;
    println!(
        "rank {}: any = {any}, max = {max}, {}",
        world.rank(),
        String::from_utf8_lossy(&from_root)
    );
    world.finalize()
}
