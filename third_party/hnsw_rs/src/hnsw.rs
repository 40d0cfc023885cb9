//! A rust implementation of Approximate NN search from:  
//! Efficient and robust approximate nearest neighbour search using Hierarchical Navigable
//! small World graphs.
//! Yu. A. Malkov, D.A Yashunin 2016, 2018

use rand::rngs::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use std::cmp::Ordering;

use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use rayon::prelude::*;
use std::sync::Arc;
use std::sync::mpsc::channel;

use std::any::type_name;

use hashbrown::HashMap;
use std::cmp::Reverse;
#[allow(unused)]
use std::collections::HashSet;
use std::collections::binary_heap::BinaryHeap;

use crate::vectors::RankTable;
use crate::visited::with_visited;

use log::trace;
use log::{debug, info};

pub use crate::filter::FilterT;
use anndists::dist::distances::Distance;

// TODO
// Profiling.

/// This unit structure provides the type to instanciate Hnsw with,
/// to get reload of graph only in the the structure.
/// It must be associated to the unit structure dist::NoDist for the distance type to provide.
#[derive(Default, Clone, Copy, Serialize, Deserialize, Debug)]
pub struct NoData;

/// maximum number of layers
pub(crate) const NB_LAYER_MAX: u8 = 16; // so max layer is 15!!

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
/// The 2-uple represent layer as u8  and rank in layer as a i32 as stored in our structure
pub struct PointId(pub u8, pub i32);

/// this type is for an identificateur of each data vector, given by client.
/// Can be the rank of data in an array, a hash value or anything that permits
/// retrieving the data.
pub type DataId = usize;

pub type PointDistance<T> = Box<dyn Distance<T>>;

/// A structure containing internal pointId with distance to this pointId.
/// The order is given by ordering the distance to the point it refers to.
/// So points ordering has a meaning only has points refers to the same point
#[derive(Debug, Clone, Copy)]
pub struct PointIdWithOrder {
    /// the identificateur of the point for which we store a distance
    pub point_id: PointId,
    /// The distance to a reference point (not represented in the structure)
    pub dist_to_ref: f32,
}

impl PartialEq for PointIdWithOrder {
    fn eq(&self, other: &PointIdWithOrder) -> bool {
        self.dist_to_ref == other.dist_to_ref
    } // end eq
}

// order points by distance to self.
impl PartialOrd for PointIdWithOrder {
    fn partial_cmp(&self, other: &PointIdWithOrder) -> Option<Ordering> {
        self.dist_to_ref.partial_cmp(&other.dist_to_ref)
    } // end cmp
} // end impl PartialOrd

impl<T: Send + Sync + Clone + Copy> From<&PointWithOrder<'_, T>> for PointIdWithOrder {
    fn from(point: &PointWithOrder<T>) -> PointIdWithOrder {
        PointIdWithOrder::new(point.point_ref.p_id, point.dist_to_ref)
    }
}

impl PointIdWithOrder {
    pub fn new(point_id: PointId, dist_to_ref: f32) -> Self {
        PointIdWithOrder {
            point_id,
            dist_to_ref,
        }
    }
} // end of impl block

//=======================================================================================
/// The struct giving an answer point to a search request.
/// This structure is exported to other language API.
/// First field is origin id of the request point, second field is distance to request point
#[repr(C)]
#[derive(Debug, Copy, Clone, Default)]
pub struct Neighbour {
    /// identification of data vector as given in initializing hnsw
    pub d_id: DataId,
    /// distance of neighbours
    pub distance: f32,
    /// point identification inside layers
    pub p_id: PointId,
}

impl Neighbour {
    pub fn new(d_id: DataId, distance: f32, p_id: PointId) -> Neighbour {
        Neighbour {
            d_id,
            distance,
            p_id,
        }
    }
    /// retrieves original id of neighbour as given in hnsw initialization
    pub fn get_origin_id(&self) -> DataId {
        self.d_id
    }
    /// return the distance
    pub fn get_distance(&self) -> f32 {
        self.distance
    }
}

//=======================================================================================

#[derive(Debug, Clone)]
enum PointData<'b, T: Clone + Send + Sync + 'b> {
    // full data
    V(Vec<T>),
    // areference to a mmaped slice
    S(&'b [T]),
} // end of enum PointData

impl<'b, T: Clone + Send + Sync + 'b> PointData<'b, T> {
    // allocate a point stored in structure
    fn new_v(v: Vec<T>) -> Self {
        PointData::V(v)
    }

    // allocate a point representation a memory mapped slice
    fn new_s(s: &'b [T]) -> Self {
        PointData::S(s)
    }

    fn get_v(&self) -> &[T] {
        match self {
            PointData::V(v) => v.as_slice(),
            PointData::S(s) => s,
        }
    } // end of get_v
} // end of impl block for PointData

/// The basestructure representing a data point.  
/// Its constains data as coming from the client, its client id,  
/// and position in layer representation and neighbours.
///
// neighbours table : one vector by layer so neighbours is allocated to NB_LAYER_MAX
//
#[derive(Debug)]
#[allow(clippy::type_complexity)]
pub struct Point<'b, T: Clone + Send + Sync> {
    /// The data of this point, coming from hnsw client and associated to origin_id,
    data: PointData<'b, T>,
    /// an id coming from client using hnsw, should identify point uniquely
    origin_id: DataId,
    /// a point id identifying point as stored in our structure
    p_id: PointId,
    /// dense rank of the point in its index (0..number of points), the slot of its
    /// visited mark during a search
    pub(crate) rank: usize,
    /// neighbours info
    /// (Somna's patch: held inline, not behind an `Arc` of its own, one read less per hop;
    /// each entry a rank and a distance, see [`Edge`])
    pub(crate) neighbours: RwLock<Lists>,
}

/// A point's neighbour lists, one per layer it is in (Somna's patch): layer 0's list is
/// held in the point itself and the upper layers' behind it, so a search of layer 0 (where
/// nearly all of a search's hops are) goes from a point straight to its list, one memory read
/// less per hop than a vector of lists; most points are in layer 0 only, and they hold no
/// allocation for upper lists at all.
#[derive(Debug)]
pub(crate) struct Lists {
    layer0: Vec<Edge>,
    upper: Vec<Vec<Edge>>,
}

impl Lists {
    /// One empty list for each of layers 0 to `top`, the layers the point is in (0.3.5 made
    /// `NB_LAYER_MAX` for every point, 384 bytes of list headers, where most points are in
    /// layer 0 only).
    fn new(top: u8) -> Self {
        Lists {
            layer0: Vec::new(),
            upper: (0..top).map(|_| Vec::new()).collect(),
        }
    }

    /// The number of layers, hence of lists.
    pub(crate) fn len(&self) -> usize {
        1 + self.upper.len()
    }

    /// The list of `layer`, if the point is in it.
    #[inline]
    pub(crate) fn get(&self, layer: usize) -> Option<&Vec<Edge>> {
        match layer {
            0 => Some(&self.layer0),
            l => self.upper.get(l - 1),
        }
    }

    /// The lists from layer 0 up.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Vec<Edge>> {
        std::iter::once(&self.layer0).chain(self.upper.iter())
    }
}

impl std::ops::Index<usize> for Lists {
    type Output = Vec<Edge>;
    fn index(&self, layer: usize) -> &Vec<Edge> {
        self.get(layer).expect("a layer the point is in")
    }
}

impl std::ops::IndexMut<usize> for Lists {
    fn index_mut(&mut self, layer: usize) -> &mut Vec<Edge> {
        match layer {
            0 => &mut self.layer0,
            l => &mut self.upper[l - 1],
        }
    }
}

impl<'b, T: Clone + Send + Sync> Point<'b, T> {
    pub fn new(v: Vec<T>, origin_id: usize, p_id: PointId, rank: usize) -> Self {
        let neighbours = Lists::new(p_id.0);
        Point {
            data: PointData::new_v(v),
            origin_id,
            p_id,
            rank,
            neighbours: RwLock::new(neighbours),
        }
    }

    pub fn new_from_mmap(s: &'b [T], origin_id: usize, p_id: PointId, rank: usize) -> Self {
        let neighbours = Lists::new(p_id.0);
        Point {
            data: PointData::new_s(s),
            origin_id,
            p_id,
            rank,
            neighbours: RwLock::new(neighbours),
        }
    }

    /// get a reference to vector data
    pub fn get_v(&self) -> &[T] {
        self.data.get_v()
    }

    /// return coordinates in indexation
    pub fn get_point_id(&self) -> PointId {
        self.p_id
    }

    /// returns external (or client id) id of point
    pub fn get_origin_id(&self) -> usize {
        self.origin_id
    }

    /// prints minimal information on neighbours of point.
    pub fn debug_dump(&self) {
        println!(" \n dump of point id : {:?}", self.p_id);
        println!("\n origin id : {:?} ", self.origin_id);
        println!(" neighbours : ...");
        let ref_neighbours = self.neighbours.read();
        for i in 0..ref_neighbours.len() {
            if !ref_neighbours[i].is_empty() {
                println!("neighbours at layer {:?}", i);
                for n in &ref_neighbours[i] {
                    println!(" rank {:?}", n.rank);
                }
            }
        }
        println!(" neighbours dump : end");
    }
} // end of block

//===========================================================================================

/// A structure to store neighbours for of a point.
#[derive(Debug, Clone)]
pub(crate) struct PointWithOrder<'b, T: Clone + Send + Sync> {
    /// the identificateur of the point for which we store a distance to a point for which
    ///  we made a request.
    point_ref: Arc<Point<'b, T>>,
    /// The distance to a point_ref to the request point (not represented in the structure)
    dist_to_ref: f32,
    /// `point_ref`'s rank, kept here so a search skips a visited neighbour without
    /// reading the point (Somna's patch)
    rank: u32,
}

impl<T: Clone + Send + Sync> PartialEq for PointWithOrder<'_, T> {
    fn eq(&self, other: &PointWithOrder<T>) -> bool {
        self.dist_to_ref == other.dist_to_ref
    } // end eq
}

impl<T: Clone + Send + Sync> Eq for PointWithOrder<'_, T> {}

// order points by distance to self.
#[allow(clippy::non_canonical_partial_ord_impl)]
impl<T: Clone + Send + Sync> PartialOrd for PointWithOrder<'_, T> {
    fn partial_cmp(&self, other: &PointWithOrder<T>) -> Option<Ordering> {
        self.dist_to_ref.partial_cmp(&other.dist_to_ref)
    } // end cmp
} // end impl PartialOrd

impl<T: Clone + Send + Sync> Ord for PointWithOrder<'_, T> {
    fn cmp(&self, other: &PointWithOrder<T>) -> Ordering {
        if !self.dist_to_ref.is_nan() && !other.dist_to_ref.is_nan() {
            self.dist_to_ref.partial_cmp(&other.dist_to_ref).unwrap()
        } else {
            panic!("got a NaN in a distance");
        }
    } // end cmp
}

impl<'b, T: Clone + Send + Sync> PointWithOrder<'b, T> {
    pub fn new(point_ref: &Arc<Point<'b, T>>, dist_to_ref: f32) -> Self {
        PointWithOrder {
            point_ref: Arc::clone(point_ref),
            dist_to_ref,
            rank: point_ref.rank as u32,
        }
    }

    /// This entry as a neighbour list holds it.
    fn edge(&self) -> Edge {
        Edge {
            rank: self.rank,
            dist: self.dist_to_ref,
        }
    }
} // end of impl block

/// One entry of a neighbour list (Somna's patch): the neighbour's rank, by which the index's
/// [`RankTable`] gives its point and vector, and its distance to the list's owner. 8 bytes
/// where 0.3.5 held an `Arc` of a `PointWithOrder` and this patch first an `Arc` of the
/// point, the distance and the rank inline (16 bytes): the lists are most of an index's
/// memory beside the vectors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edge {
    pub(crate) rank: u32,
    pub(crate) dist: f32,
}

impl PartialEq for Edge {
    fn eq(&self, other: &Edge) -> bool {
        self.dist == other.dist
    }
}

impl Eq for Edge {}

impl PartialOrd for Edge {
    fn partial_cmp(&self, other: &Edge) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// By distance to the owner, nearest first (a NaN panics, as for [`PointWithOrder`]).
impl Ord for Edge {
    fn cmp(&self, other: &Edge) -> Ordering {
        self.dist
            .partial_cmp(&other.dist)
            .expect("got a NaN in a distance")
    }
}

//============================================================================================

/// Asks the CPU to bring the cache line at `p` closer (Somna's patch); a hint only, never
/// a read: any address is allowed.
#[inline(always)]
fn prefetch<P>(p: *const P) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching does not access memory and cannot fault, whatever the address.
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `list` in an allocation of exactly its length (Somna's patch). Neighbour lists are most
/// of an index's memory beside the vectors: in layer 0 a list holds between M and 2·M
/// entries (of 16 bytes then, 8 now: see [`Edge`]), and room for 2·M + 1 in every list (as
/// 0.3.5 and this patch first made them) took 1,040 bytes a point where the lists held 44
/// entries on average (700 bytes) in a 100,000-point index. A list grows one entry at a time (`reserve_exact`:
/// the allocator resizes in place while its block has room) and is copied when cut back.
fn exact_list<P>(list: Vec<P>) -> Vec<P> {
    if list.capacity() == list.len() {
        return list;
    }
    let mut exact = Vec::with_capacity(list.len());
    exact.extend(list);
    exact
}

/// Prefetches each 64-byte line of the `bytes` bytes from `start` (Somna's patch).
#[inline(always)]
fn prefetch_lines(start: *const u8, bytes: usize) {
    let mut o = 0;
    while o < bytes {
        prefetch(start.wrapping_add(o));
        o += 64;
    }
}

/// Prefetches the point at `p` (Somna's patch): its fields, the neighbour lists' lock and
/// layer 0's list among them.
#[inline(always)]
fn prefetch_point<P>(p: *const P) {
    prefetch_lines(p as *const u8, size_of::<P>());
}

/// Prefetches every cache line of `v` (Somna's patch).
#[inline(always)]
fn prefetch_all<T>(v: &[T]) {
    prefetch_lines(v.as_ptr() as *const u8, size_of_val(v));
}

/// A point met by a search and its distance to the query, as a plain pointer: what the
/// search heaps hold (Somna's patch; ordered by distance, NaN last). The graph keeps the
/// point alive; no reference count is touched.
struct Near<'b, T: Clone + Send + Sync> {
    dist: f32,
    point: *const Point<'b, T>,
}

impl<'b, T: Clone + Send + Sync> Near<'b, T> {
    fn new(dist: f32, point: &Arc<Point<'b, T>>) -> Self {
        Near {
            dist,
            point: Arc::as_ptr(point),
        }
    }

    /// `point` must be held in an `Arc` by the graph (as every point the rank table gives).
    fn of(dist: f32, point: &Point<'b, T>) -> Self {
        Near { dist, point }
    }
}

impl<T: Clone + Send + Sync> PartialEq for Near<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.dist.total_cmp(&other.dist).is_eq()
    }
}

impl<T: Clone + Send + Sync> Eq for Near<'_, T> {}

impl<T: Clone + Send + Sync> PartialOrd for Near<'_, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Clone + Send + Sync> Ord for Near<'_, T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.dist.total_cmp(&other.dist)
    }
}

/// A point met by a search and its distance to the query, as a search returns it
/// (Somna's patch; ordered by distance, NaN last).
pub(crate) struct Scored<'b, T: Clone + Send + Sync> {
    pub(crate) dist: f32,
    pub(crate) point: Arc<Point<'b, T>>,
}

impl<T: Clone + Send + Sync> PartialEq for Scored<'_, T> {
    fn eq(&self, other: &Self) -> bool {
        self.dist.total_cmp(&other.dist).is_eq()
    }
}

impl<T: Clone + Send + Sync> Eq for Scored<'_, T> {}

impl<T: Clone + Send + Sync> PartialOrd for Scored<'_, T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Clone + Send + Sync> Ord for Scored<'_, T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.dist.total_cmp(&other.dist)
    }
}

//============================================================================================

//  LayerGenerator
use rand::distr::Uniform;
use rand::prelude::*;

/// a struct to randomly generate a level for an item according to an exponential law
/// of parameter given by scale.
/// The distribution is constrained to be in [0..maxlevel[
pub struct LayerGenerator {
    rng: Arc<Mutex<rand::rngs::StdRng>>,
    unif: Uniform<f64>,
    // drives number of levels generated ~ S
    scale: f64,
    maxlevel: usize,
}

impl LayerGenerator {
    pub fn new(max_nb_connection: usize, maxlevel: usize) -> Self {
        let scale = 1. / (max_nb_connection as f64).ln();
        LayerGenerator {
            rng: Arc::new(Mutex::new(StdRng::from_rng(
                &mut Xoshiro256PlusPlus::seed_from_u64(397),
            ))),
            unif: Uniform::<f64>::new(0., 1.).unwrap(),
            scale,
            maxlevel,
        }
    }

    // new when we know scale used. Should replace the one without scale
    pub(crate) fn new_with_scale(
        max_nb_connection: usize,
        scale_factor: f64,
        maxlevel: usize,
    ) -> Self {
        let scale_default = 1. / (max_nb_connection as f64).ln();
        LayerGenerator {
            rng: Arc::new(Mutex::new(StdRng::from_rng(
                &mut Xoshiro256PlusPlus::seed_from_u64(397),
            ))),
            unif: Uniform::<f64>::new(0., 1.).unwrap(),
            scale: scale_default * scale_factor,
            maxlevel,
        }
    }
    //
    // l=0 most densely packed layer
    // if S is scale we sample so that P(l=n) = exp(-n/S) - exp(- (n+1)/S)
    // with S = 1./ln(max_nb_connection) P(l >= maxlevel) = exp(-maxlevel * ln(max_nb_connection))
    // for nb_conn = 10, even with maxlevel = 10,  we get P(l >= maxlevel) = 1.E-13
    // In Malkov(2016) S = 1./log(max_nb_connection)
    //
    /// generate a layer with given maxlevel. upper layers (higher index) are of decreasing probabilities.
    /// thread safe method.
    fn generate(&self) -> usize {
        let mut protected_rng = self.rng.lock();
        let xsi = protected_rng.sample(self.unif);
        let level = -xsi.ln() * self.scale;
        let mut ulevel = level.floor() as usize;
        // we redispatch possibly sampled level  >= maxlevel to required range
        if ulevel >= self.maxlevel {
            // This occurs with very low probability. Cf commentary above.
            ulevel = protected_rng.sample(Uniform::<usize>::new(0, self.maxlevel).unwrap());
        }
        ulevel
    }

    /// just to try some variations on exponential level sampling. Unused.
    fn set_scale_modification(&mut self, scale_modification: f64) {
        self.scale *= scale_modification;
        log::info!("using scale for sampling levels : {:.2e}", self.scale);
    }

    //
    fn get_level_scale(&self) -> f64 {
        self.scale
    }
} // end impl for LayerGenerator

// ====================================================================

/// A short-hand for points in a layer
type Layer<'b, T> = Vec<Arc<Point<'b, T>>>;

/// a structure for indexation of points in layer
#[allow(unused)]
pub struct PointIndexation<'b, T: Clone + Send + Sync> {
    /// max number of connection for a point at a layer
    pub(crate) max_nb_connection: usize,
    //
    pub(crate) max_layer: usize,
    /// needs at least one representation of points. points_by_layers\[i\] gives the points in layer i
    pub(crate) points_by_layer: Arc<RwLock<Vec<Layer<'b, T>>>>,
    /// utility to generate a level
    pub(crate) layer_g: LayerGenerator,
    /// number of points in indexed structure
    pub(crate) nb_point: Arc<RwLock<usize>>,
    /// curent enter_point: an Arc RwLock on a possible Arc Point
    pub(crate) entry_point: Arc<RwLock<Option<Arc<Point<'b, T>>>>>,
    /// each point and its vector by rank (Somna's patch: see `vectors.rs`)
    pub(crate) by_rank: RankTable<'b, T>,
}

// (Somna's patch: 0.3.5 dropped an indexation by clearing every point's neighbour lists
// first, since each list held `Arc`s of its neighbours, a cycle of reference counts. A list
// now holds ranks, so the points drop with their layers.)

impl<'b, T: Clone + Send + Sync> PointIndexation<'b, T> {
    pub fn new(max_nb_connection: usize, max_layer: usize, max_elements: usize) -> Self {
        let mut points_by_layer = Vec::with_capacity(max_layer);
        for i in 0..max_layer {
            // recall that range are right extremeity excluded
            // compute fraction of points going into layer i and do expected memory reservation
            let s = 1. / (max_nb_connection as f64).ln();
            let frac = (-(i as f64) / s).exp() - (-((i + 1) as f64) / s).exp();
            let expected_size = ((frac * max_elements as f64).round()) as usize;
            points_by_layer.push(Vec::with_capacity(expected_size));
        }
        let layer_g = LayerGenerator::new(max_nb_connection, max_layer);
        PointIndexation {
            max_nb_connection,
            max_layer,
            points_by_layer: Arc::new(RwLock::new(points_by_layer)),
            layer_g,
            nb_point: Arc::new(RwLock::new(0)),
            entry_point: Arc::new(RwLock::new(None)),
            by_rank: RankTable::new(),
        }
    } // end of new

    /// returns the maximum level of layer observed
    pub fn get_max_level_observed(&self) -> u8 {
        let opt = self.entry_point.read();
        match opt.as_ref() {
            Some(arc_point) => arc_point.p_id.0,
            None => 0,
        }
    }

    pub fn get_level_scale(&self) -> f64 {
        self.layer_g.get_level_scale()
    }

    fn debug_dump(&self) {
        println!(" debug dump of PointIndexation");
        let max_level_observed = self.get_max_level_observed();
        // CAVEAT a lock once
        for l in 0..=max_level_observed as usize {
            println!(
                " layer {} : length : {} ",
                l,
                self.points_by_layer.read()[l].len()
            );
        }
        println!(" debug dump of PointIndexation end");
    }

    /// real insertion of point in point indexation
    // generate a new Point/ArcPoint (with neigbourhood info empty) and store it in global table
    // The function is called by Hnsw insert method
    fn generate_new_point(&self, data: Vec<T>, origin_id: usize) -> (Arc<Point<'b, T>>, usize) {
        // get a write lock at the beginning of the function
        let level = self.layer_g.generate();
        let new_point;
        {
            // open a write lock on points_by_layer
            let mut points_by_layer_ref = self.points_by_layer.write();
            let mut p_id = PointId(level as u8, -1);
            p_id.1 = points_by_layer_ref[p_id.0 as usize].len() as i32;
            // ranks are dense: the number of points stored before this one
            let rank = points_by_layer_ref.iter().map(|l| l.len()).sum();
            // make a Point and then an Arc<Point>
            let point = Point::new(data, origin_id, p_id, rank);
            new_point = Arc::new(point);
            // SAFETY: the point is one this indexation holds until it is dropped (points are
            // never removed), and a point's data is never changed.
            unsafe { self.by_rank.push(&new_point) };
            trace!("definitive pushing of point {:?}", p_id);
            points_by_layer_ref[p_id.0 as usize].push(Arc::clone(&new_point));
        } // close write lock on points_by_layer
        //
        let nb_point;
        {
            let mut lock_nb_point = self.nb_point.write();
            *lock_nb_point += 1;
            nb_point = *lock_nb_point;
            if nb_point % 50000 == 0 {
                log::info!(" setting number of points {:?} ", nb_point);
            }
        }
        trace!(" setting number of points {:?} ", *self.nb_point);
        // Now possibly this is a point on a new layer that will have no neighbours in its layer
        (Arc::clone(&new_point), nb_point)
    } // end of insert

    /// check if entry_point is modified
    fn check_entry_point(&self, new_point: &Arc<Point<'b, T>>) {
        //
        // take directly a write lock so that we are sure nobody can change anything between read and write
        // of entry_point_id
        trace!("trying to get a lock on entry point");
        let mut entry_point_ref = self.entry_point.write();
        match entry_point_ref.as_ref() {
            Some(arc_point) => {
                if new_point.p_id.0 > arc_point.p_id.0 {
                    debug!("Hnsw  , inserting  entry point {:?} ", new_point.p_id);
                    debug!(
                        "PointIndexation insert setting max level from {:?} to {:?}",
                        arc_point.p_id.0, new_point.p_id.0
                    );
                    *entry_point_ref = Some(Arc::clone(new_point));
                }
            }
            None => {
                trace!("initializing entry point");
                debug!("Hnsw  , inserting  entry point {:?} ", new_point.p_id);
                *entry_point_ref = Some(Arc::clone(new_point));
            }
        }
    } // end of check_entry_point

    /// The point a neighbour entry names (Somna's patch).
    #[inline]
    pub(crate) fn point_of(&self, e: &Edge) -> &Point<'b, T> {
        self.entry_of(e).0
    }

    /// The point a neighbour entry names and its vector (Somna's patch).
    #[inline]
    pub(crate) fn entry_of(&self, e: &Edge) -> (&Point<'b, T>, &[T]) {
        self.by_rank
            .get(e.rank as usize)
            .expect("a neighbour entry names a point of its index")
    }

    /// Another `Arc` of the point a neighbour entry names (Somna's patch).
    pub(crate) fn arc_of(&self, e: &Edge) -> Arc<Point<'b, T>> {
        self.by_rank
            .arc(e.rank as usize)
            .expect("a neighbour entry names a point of its index")
    }

    /// For each layer, the neighbours of `point` as [`Neighbour`]s, one list for each of the
    /// `NB_LAYER_MAX` layers as the dump format has them (Somna's patch: this was
    /// `Point::get_neighborhood_id`; a neighbour entry now holds a rank, which only the
    /// index can resolve).
    pub fn get_neighborhood_id(&self, point: &Point<'b, T>) -> Vec<Vec<Neighbour>> {
        let lists = point.neighbours.read();
        let mut neighborhood = Vec::<Vec<Neighbour>>::with_capacity(NB_LAYER_MAX as usize);
        for list in lists.iter() {
            neighborhood.push(
                list.iter()
                    .map(|e| {
                        let n = self.point_of(e);
                        Neighbour::new(n.get_origin_id(), e.dist, n.get_point_id())
                    })
                    .collect(),
            );
        }
        neighborhood.resize(NB_LAYER_MAX as usize, Vec::new());
        neighborhood
    }

    /// returns the number of points in layered structure
    pub fn get_nb_point(&self) -> usize {
        *self.nb_point.read()
    }

    /// returns the number of points in a given layer, 0 on a bad layer num
    pub fn get_layer_nb_point(&self, layer: usize) -> usize {
        let nb_layer = self.points_by_layer.read().len();
        if layer < nb_layer {
            self.points_by_layer.read()[layer].len()
        } else {
            0
        }
    } // end of get_layer_nb_point

    /// returns the size of data vector in graph if any, else return 0
    pub fn get_data_dimension(&self) -> usize {
        let ep = self.entry_point.read();
        match ep.as_ref() {
            Some(point) => point.get_v().len(),
            None => 0,
        }
    }

    /// returns (**by cloning**) the data inside a point given it PointId, or None if PointId is not coherent.  
    /// Can be useful after reloading from a dump.   
    /// NOTE : This function should not be called during or before insertion in the structure is terminated as it
    /// uses read locks to access the inside of Hnsw structure.
    pub fn get_point_data(&self, p_id: &PointId) -> Option<Vec<T>> {
        if p_id.1 < 0 {
            return None;
        }
        let p: usize = std::convert::TryFrom::try_from(p_id.1).unwrap();
        let l = p_id.0 as usize;
        if p_id.0 <= self.get_max_level_observed() && p < self.get_layer_nb_point(l) {
            Some(self.points_by_layer.read()[l][p].get_v().to_vec())
        } else {
            None
        }
    } // end of get_point_data

    /// returns (**by Arc::clone**) the point given it PointId, or None if PointId is not coherent.  
    /// Can be useful after reloading from a dump.   
    /// NOTE : This function should not be called during or before insertion in the structure is terminated as it
    /// uses read locks to access the inside of Hnsw structure.
    #[allow(unused)]
    pub(crate) fn get_point(&self, p_id: &PointId) -> Option<Arc<Point<'b, T>>> {
        if p_id.1 < 0 {
            return None;
        }
        let p: usize = std::convert::TryFrom::try_from(p_id.1).unwrap();
        let l = p_id.0 as usize;
        if p_id.0 <= self.get_max_level_observed() && p < self.get_layer_nb_point(l) {
            Some(self.points_by_layer.read()[l][p].clone())
        } else {
            None
        }
    } // end of get_point

    /// get an iterator on the points stored in a given layer
    pub fn get_layer_iterator<'a>(&'a self, layer: usize) -> IterPointLayer<'a, 'b, T> {
        IterPointLayer::new(self, layer)
    } // end of get_layer_iterator
} // end of impl PointIndexation

//============================================================================================

/// an iterator on points stored.
/// The iteration begins at level 0 (most populated level) and goes upward in levels.
/// The iterator takes a ReadGuard on the PointIndexation structure
pub struct IterPoint<'a, 'b, T: Clone + Send + Sync + 'b> {
    point_indexation: &'a PointIndexation<'b, T>,
    pi_guard: RwLockReadGuard<'a, Vec<Layer<'b, T>>>,
    layer: i64,
    slot_in_layer: i64,
}

impl<'a, 'b, T: Clone + Send + Sync> IterPoint<'a, 'b, T> {
    pub fn new(point_indexation: &'a PointIndexation<'b, T>) -> Self {
        let pi_guard: RwLockReadGuard<Vec<Layer<'b, T>>> = point_indexation.points_by_layer.read();
        IterPoint {
            point_indexation,
            pi_guard,
            layer: -1,
            slot_in_layer: -1,
        }
    }
} // end of block impl IterPoint

/// iterator for layer 0 to upper layer.
impl<'b, T: Clone + Send + Sync> Iterator for IterPoint<'_, 'b, T> {
    type Item = Arc<Point<'b, T>>;
    //
    fn next(&mut self) -> Option<Self::Item> {
        if self.layer == -1 {
            self.layer = 0;
            self.slot_in_layer = 0;
        }
        if (self.slot_in_layer as usize) < self.pi_guard[self.layer as usize].len() {
            let slot = self.slot_in_layer as usize;
            self.slot_in_layer += 1;
            Some(self.pi_guard[self.layer as usize][slot].clone())
        } else {
            self.slot_in_layer = 0;
            self.layer += 1;
            // must reach a non empty layer if possible
            let entry_point_ref = self.point_indexation.entry_point.read();
            let points_by_layer = self.point_indexation.points_by_layer.read();
            let entry_point_level = entry_point_ref.as_ref().unwrap().p_id.0;
            while (self.layer as u8) <= entry_point_level
                && points_by_layer[self.layer as usize].is_empty()
            {
                self.layer += 1;
            }
            // now here either  (self.layer as u8) > self.point_indexation.max_level_observed
            // or self.point_indexation.points_by_layer[self.layer as usize ].len() > 0
            if (self.layer as u8) <= entry_point_level {
                let slot = self.slot_in_layer as usize;
                self.slot_in_layer += 1;
                Some(points_by_layer[self.layer as usize][slot].clone())
            } else {
                None
            }
        }
    } // end of next
} // end of impl Iterator

impl<'a, 'b, T: Clone + Send + Sync> IntoIterator for &'a PointIndexation<'b, T> {
    type Item = Arc<Point<'b, T>>;
    type IntoIter = IterPoint<'a, 'b, T>;
    //
    fn into_iter(self) -> Self::IntoIter {
        IterPoint::new(self)
    }
} // end of IntoIterator for &'a PointIndexation<T>

/// An iterator on points stored in a given layer
/// The iterator stores a ReadGuard on the structure PointIndexation
pub struct IterPointLayer<'a, 'b, T: Clone + Send + Sync> {
    _point_indexation: &'a PointIndexation<'b, T>,
    pi_guard: RwLockReadGuard<'a, Vec<Layer<'b, T>>>,
    layer: usize,
    slot_in_layer: usize,
}

impl<'a, 'b, T: Clone + Send + Sync> IterPointLayer<'a, 'b, T> {
    pub fn new(point_indexation: &'a PointIndexation<'b, T>, layer: usize) -> Self {
        let pi_guard: RwLockReadGuard<Vec<Layer<'b, T>>> = point_indexation.points_by_layer.read();
        IterPointLayer {
            _point_indexation: point_indexation,
            pi_guard,
            layer,
            slot_in_layer: 0,
        }
    }
} // end of block impl IterPointLayer

/// iterator for layer 0 to upper layer.
impl<'b, T: Clone + Send + Sync + 'b> Iterator for IterPointLayer<'_, 'b, T> {
    type Item = Arc<Point<'b, T>>;
    //
    fn next(&mut self) -> Option<Self::Item> {
        if (self.slot_in_layer) < self.pi_guard[self.layer].len() {
            let slot = self.slot_in_layer;
            self.slot_in_layer += 1;
            Some(self.pi_guard[self.layer][slot].clone())
        } else {
            None
        }
    } // end of next
} // end of impl Iterator

// ============================================================================================

// The fields are made pub(crate) to be able to initialize struct from hnswio
/// The Base structure for hnsw implementation.  
/// The main useful functions are : new, insert, insert_parallel, search, parallel_search and file_dump
/// as described in trait AnnT.  
///
/// Other functions are mainly for others crate to get access to some fields.
pub struct Hnsw<'b, T: Clone + Send + Sync + 'b, D: Distance<T>> {
    /// asked number of candidates in search
    pub(crate) ef_construction: usize,
    /// maximum number of connection by layer for a point
    pub(crate) max_nb_connection: usize,
    /// flag to enforce that we have ef candidates as pruning strategy can discard some points
    /// Can be set to true with method :set_extend_candidates
    /// When set to true used only in base layer.
    pub(crate) extend_candidates: bool,
    /// defuault to false
    pub(crate) keep_pruned: bool,
    /// max layer , recall rust is in 0..maxlevel right bound excluded
    pub(crate) max_layer: usize,
    /// The global table containing points
    pub(crate) layer_indexed_points: PointIndexation<'b, T>,
    /// dimension data stored in points
    #[allow(unused)]
    pub(crate) data_dimension: usize,
    /// distance between points. initialized at first insertion
    pub(crate) dist_f: D,
    /// insertion mode or searching mode. This flag prevents a internal thread to do a write when searching with other threads.
    pub(crate) searching: bool,
    /// set to true if some data come from a mmap
    pub(crate) datamap_opt: bool,
} // end of Hnsw

impl<'b, T: Clone + Send + Sync, D: Distance<T> + Send + Sync> Hnsw<'b, T, D> {
    /// allocation function  
    /// . max_nb_connection : number of neighbours stored, by layer, in tables. Must be less than 256.  
    /// . ef_construction : controls numbers of neighbours explored during construction. See README or paper.  
    /// . max_elements : hint to speed up allocation tables. number of elements expected.  
    /// . f : the distance function
    pub fn new(
        max_nb_connection: usize,
        max_elements: usize,
        max_layer: usize,
        ef_construction: usize,
        f: D,
    ) -> Self {
        let adjusted_max_layer = (NB_LAYER_MAX as usize).min(max_layer);
        let layer_indexed_points =
            PointIndexation::<T>::new(max_nb_connection, adjusted_max_layer, max_elements);
        let extend_candidates = false;
        let keep_pruned = false;
        //
        if max_nb_connection > 256 {
            println!("error max_nb_connection must be less equal than 256");
            std::process::exit(1);
        }
        //
        info!("Hnsw max_nb_connection {:?}", max_nb_connection);
        info!("Hnsw nb elements {:?}", max_elements);
        info!("Hnsw ef_construction {:?}", ef_construction);
        info!("Hnsw distance {:?}", type_name::<D>());
        info!("Hnsw extend candidates {:?}", extend_candidates);
        //
        Hnsw {
            max_nb_connection,
            ef_construction,
            extend_candidates,
            keep_pruned,
            max_layer: adjusted_max_layer,
            layer_indexed_points,
            data_dimension: 0,
            dist_f: f,
            searching: false,
            datamap_opt: false,
        }
    } // end of new

    /// get ef_construction used in graph creation
    pub fn get_ef_construction(&self) -> usize {
        self.ef_construction
    }
    /// returns the maximum layer authorized in construction
    pub fn get_max_level(&self) -> usize {
        self.max_layer
    }

    /// return the maximum level reached in the layers.
    pub fn get_max_level_observed(&self) -> u8 {
        self.layer_indexed_points.get_max_level_observed()
    }
    /// returns the maximum of links between a point and others points in each layer
    pub fn get_max_nb_connection(&self) -> u8 {
        self.max_nb_connection as u8
    }
    /// returns number of points stored in hnsw structure
    pub fn get_nb_point(&self) -> usize {
        self.layer_indexed_points.get_nb_point()
    }
    /// set searching mode.  
    /// It is not possible to do parallel insertion and parallel searching simultaneously in different threads
    /// so to enable searching after parallel insertion the flag must be set to true.  
    /// To resume parallel insertion reset the flag to false and so on.
    pub fn set_searching_mode(&mut self, flag: bool) {
        // must use an atomic!
        self.searching = flag;
    }
    /// get name if distance
    pub fn get_distance_name(&self) -> String {
        type_name::<D>().to_string()
    }
    /// set the flag asking to keep pruned vectors by Navarro's heuristic (see Paper).
    /// It can be useful for small datasets where the pruning can make it difficult
    /// to get the exact number of neighbours asked for.
    pub fn set_keeping_pruned(&mut self, flag: bool) {
        self.keep_pruned = flag;
    }

    /// retrieves the distance used in Hnsw construction
    pub fn get_distance(&self) -> &D {
        &self.dist_f
    }

    /// set extend_candidates to given flag. By default it is false.  
    /// Only used in the level 0 layer during insertion (see the paper)
    /// flag to enforce that we have ef candidates neighbours examined as pruning strategy
    /// can discard some points
    pub fn set_extend_candidates(&mut self, flag: bool) {
        self.extend_candidates = flag;
    }

    // When dumping we need to know if some file is mmapped
    pub(crate) fn get_datamap_opt(&self) -> bool {
        self.datamap_opt
    }

    /// By default the levels are sampled using an exponential law of parameter **ln(max_nb_conn)**
    /// so the probability of having more than l levels decrease as **exp(-l * ln(max_nb_conn))**.  
    /// Reducing the scale change the parameter of the exponential to **ln(max_nb_conn)/scale**.
    /// This reduce the number of levels generated and can provide better precision, reduce memory with marginally more cpu used.
    ///
    /// NOTE: This is useful when using [parallel_insert](Self::parallel_insert).
    /// Reducing the number of layers reduce random deviation from serial insertion results due to thread contention.
    ///
    /// The factor must between 0.2 and 1.
    pub fn modify_level_scale(&mut self, scale_modification: f64) {
        //
        if self.get_nb_point() > 0 {
            println!(
                "using modify_level_scale is possible at creation of a Hnsw structure to ensure coherence between runs"
            )
        }
        //
        let min_factor = 0.2;
        println!(
            "\n  Current scale value : {:.2e}, Scale modification factor asked : {:.2e},(modification factor must be between {:.2e} and 1.)",
            self.layer_indexed_points.layer_g.scale, scale_modification, min_factor
        );
        //
        if scale_modification > 1. {
            println!(
                "\n Scale modification not applied, modification arg {:.2e} not valid , factor must be less than 1.)",
                scale_modification
            );
        } else if scale_modification < min_factor {
            println!(
                "\n Scale modification arg {:.2e} not valid , factor must be greater than {:.2e}, using {:.2e})",
                scale_modification, min_factor, min_factor
            );
        }
        //
        self.layer_indexed_points
            .layer_g
            .set_scale_modification(scale_modification.max(min_factor).min(1.));
    } // end of set_scale_modification

    /// Greedy algorithm n° 2 in Malkov paper: the `ef` points nearest `point` found by a
    /// best-first walk of `layer` from `entry_point`, nearest first. Only points passing
    /// `filter` are returned, but the walk goes through the others too.
    ///
    /// Somna's patch: the walk keeps (distance, point) pairs in its heaps instead of an
    /// `Arc<PointWithOrder>` allocated per step, marks visited points in a per-thread array
    /// indexed by rank instead of a hash map of `Arc`s (the rank is read from the neighbour
    /// list, so a visited neighbour costs no access to its point), reads each neighbour
    /// list in place (entries inline, not behind an `Arc` each), finds each neighbour's
    /// vector by rank in the table of vectors without reading the point, prefetches the
    /// vectors ahead of the distances and the point of the candidate likely to come next. A
    /// filtered walk stops as an unfiltered one does, once the nearest candidate left is
    /// farther than the farthest of `ef` accepted points (hnswlib's rule), instead of
    /// dropping rejected points from a full result and walking on.
    pub(crate) fn search_layer_scored(
        &self,
        point: &[T],
        entry_point: &Arc<Point<'b, T>>,
        ef: usize,
        layer: u8,
        filter: Option<&dyn FilterT>,
    ) -> Vec<Scored<'b, T>> {
        if entry_point.p_id.1 < 0 {
            return Vec::new();
        }
        let ef = ef.max(1);
        let passes = |p: &Point<'b, T>| filter.is_none_or(|f| f.hnsw_filter(&p.origin_id));
        let capacity = self.get_nb_point();
        with_visited(capacity, |visited| {
            let entry_dist = self.dist_f.eval(point, entry_point.data.get_v());
            visited.insert(entry_point.rank);
            // (the heaps hold plain pointers: no reference count is touched per candidate)
            let mut candidates = BinaryHeap::with_capacity(2 * ef);
            let mut found: BinaryHeap<Near<'b, T>> = BinaryHeap::with_capacity(ef + 1);
            candidates.push(Reverse(Near::new(entry_dist, entry_point)));
            if passes(entry_point) {
                found.push(Near::new(entry_dist, entry_point));
            }
            // the neighbours of the current candidate not visited yet: their point and vector
            let mut fresh: Vec<(&Point<'b, T>, &[T])> =
                Vec::with_capacity(2 * self.max_nb_connection);
            while let Some(Reverse(c)) = candidates.pop() {
                if found.len() >= ef && found.peek().is_some_and(|f| c.dist > f.dist) {
                    break;
                }
                // the candidate likely to come next: its point (with its layer-0 list's
                // address) fetched while this one's neighbours are measured
                if let Some(Reverse(next)) = candidates.peek() {
                    prefetch_point(next.point);
                }
                // SAFETY: every point a search meets is held by the graph's layers (an `Arc`
                // in `points_by_layer`, never removed) for as long as `&self` lives.
                let c_point = unsafe { &*c.point };
                let neighbours = c_point.neighbours.read();
                let Some(list) = neighbours.get(layer as usize) else {
                    continue; // (a point not in this layer: only the entry point can be)
                };
                // Two passes so the memory reads overlap with each other and with the
                // arithmetic: the neighbours not visited yet, each vector's first line
                // prefetched (the vector found by rank, without reading the point); then the
                // distances, each vector prefetched whole two neighbours ahead.
                fresh.clear();
                for e in list.iter() {
                    if visited.insert(e.rank as usize) {
                        let (p, v) = self.layer_indexed_points.entry_of(e);
                        prefetch(v.as_ptr());
                        fresh.push((p, v));
                    }
                }
                fresh.iter().take(2).for_each(|&(_, v)| prefetch_all(v));
                for (j, &(e, v)) in fresh.iter().enumerate() {
                    if let Some(&(_, ahead)) = fresh.get(j + 2) {
                        prefetch_all(ahead);
                    }
                    let dist = self.dist_f.eval(point, v);
                    if found.len() < ef || found.peek().is_some_and(|f| dist < f.dist) {
                        if candidates.peek().is_none_or(|Reverse(t)| dist < t.dist) {
                            prefetch_point(e as *const Point<'b, T>); // the next candidate now
                        }
                        candidates.push(Reverse(Near::of(dist, e)));
                        if passes(e) {
                            found.push(Near::of(dist, e));
                            if found.len() > ef {
                                found.pop();
                            }
                        }
                    }
                }
            }
            found
                .into_sorted_vec()
                .into_iter()
                .map(|n| {
                    // SAFETY: `n.point` came from `Arc::as_ptr` of a point the graph holds
                    // (see above; the rank table's points are such pointers too), so it is
                    // alive and another reference may be counted.
                    let point = unsafe {
                        Arc::increment_strong_count(n.point);
                        Arc::from_raw(n.point)
                    };
                    Scored {
                        dist: n.dist,
                        point,
                    }
                })
                .collect()
        })
    }

    /// [`Self::search_layer_scored`] as the heap of positive distances the original
    /// search_layer returned.
    fn search_layer(
        &self,
        point: &[T],
        entry_point: Arc<Point<'b, T>>,
        ef: usize,
        layer: u8,
        filter: Option<&dyn FilterT>,
    ) -> BinaryHeap<PointWithOrder<'b, T>> {
        self.search_layer_scored(point, &entry_point, ef, layer, filter)
            .into_iter()
            .map(|s| PointWithOrder::new(&s.point, s.dist))
            .collect()
    }

    /// insert a tuple (&Vec, usize) with its external id as given by the client.
    ///  The insertion method gives the point an internal id.
    #[inline]
    pub fn insert(&self, datav_with_id: (&[T], usize)) {
        self.insert_slice((datav_with_id.0, datav_with_id.1))
    }

    // Hnsw insert.
    ///  Insert a data slice with its external id as given by the client.   
    ///  The insertion method gives the point an internal id.  
    ///  The slice insertion makes integration with ndarray crate easier than the vector insertion
    pub fn insert_slice(&self, data_with_id: (&[T], usize)) {
        let (data, origin_id) = data_with_id;
        self.insert_owned(data.to_vec(), origin_id);
    }

    /// Inserts `data` with its external id, taking the vector as it is instead of copying
    /// it, and returns the new point, whose [`Point::get_v`] reads the vector back (Somna's
    /// patch: a caller that needs the vectors again keeps the points instead of a copy).
    pub fn insert_owned(&self, data: Vec<T>, origin_id: usize) -> Arc<Point<'b, T>> {
        let keep_pruned = self.keep_pruned;
        // insert in indexation and get point_id adn generate a new entry_point if necessary
        let (new_point, point_rank) = self
            .layer_indexed_points
            .generate_new_point(data, origin_id);
        let inserted = Arc::clone(&new_point);
        let data = inserted.data.get_v();
        trace!("Hnsw insert generated new point {:?} ", new_point.p_id);
        // now real work begins
        // allocate a binary heap
        let level = new_point.p_id.0;
        let mut enter_point_copy = None;
        let mut max_level_observed = 0;
        // entry point has been set in
        {
            // I open a read lock on an option
            if let Some(arc_point) = self.layer_indexed_points.entry_point.read().as_ref() {
                enter_point_copy = Some(Arc::clone(arc_point));
                if point_rank == 1 {
                    debug!(
                        "Hnsw  stored first point , direct return  {:?} ",
                        new_point.p_id
                    );
                    return inserted;
                }
                max_level_observed = enter_point_copy.as_ref().unwrap().p_id.0;
            }
        }
        if enter_point_copy.is_none() {
            self.layer_indexed_points.check_entry_point(&new_point);
            return inserted;
        }
        let mut dist_to_entry = self
            .dist_f
            .eval(data, enter_point_copy.as_ref().unwrap().data.get_v());
        // we go from self.max_level_observed to level+1 included: a greedy descent to
        // the nearest point of each layer above the new point's own (Somna's patch: the
        // distance comes with the point, and the new point keeps no list in layers it is
        // not in, where nothing would ever read it)
        for l in ((level + 1)..(max_level_observed + 1)).rev() {
            let entry = enter_point_copy.as_ref().unwrap();
            if let Some(nearest) = self.search_layer_scored(data, entry, 1, l, None).pop() {
                if nearest.dist < dist_to_entry {
                    dist_to_entry = nearest.dist;
                    enter_point_copy = Some(nearest.point);
                }
            }
        }
        // now enter_point_id_copy contains id of nearest
        // now loop down to 0
        // (from the highest layer the graph had when the insertion began: in a layer above
        // it the new point is the only one, with no neighbours, as in hnswlib)
        for l in (0..=level.min(max_level_observed)).rev() {
            let ef = self.ef_construction;
            // when l == level, we cannot get new_point in sorted_points as it is seen only from declared neighbours
            // (nearest on top: negative distances, as select_neighbours takes them)
            let mut sorted_points: BinaryHeap<PointWithOrder<T>> = self
                .search_layer_scored(data, enter_point_copy.as_ref().unwrap(), ef, l, None)
                .into_iter()
                .map(|s| PointWithOrder::new(&s.point, -s.dist))
                .collect();
            trace!(
                "in insert :search_layer layer {:?}, returned {:?} points ",
                l,
                sorted_points.len()
            );
            if !sorted_points.is_empty() {
                // Somna's patch: a new point chooses M neighbours in layer 0 as in every
                // other layer (hnswlib's rule); its list may grow to 2·M by the reverse
                // updates of later points
                let nb_conn = self.max_nb_connection;
                let extend_c = l == 0 && self.extend_candidates;
                let mut neighbours = Vec::<PointWithOrder<T>>::with_capacity(nb_conn + 1);
                self.select_neighbours(
                    data,
                    &mut sorted_points,
                    nb_conn,
                    extend_c,
                    l,
                    keep_pruned,
                    &mut neighbours,
                );
                // sort neighbours
                neighbours.sort_unstable();
                // we must add bidirecti*onal from data i.e new_point_id to neighbours
                // (Somna's patch: a list holds no more room than its entries; see
                // `exact_list`)
                let nearest = neighbours.first().map(|n| Arc::clone(&n.point_ref));
                new_point.neighbours.write()[l as usize] =
                    neighbours.iter().map(PointWithOrder::edge).collect();
                // this reverse neighbour update could be done here but we put it at end to gather all code
                // requiring a mutex guard for multi threading.
                // update ep for loop iteration. As we sorted neighbours the nearest
                if nearest.is_some() {
                    enter_point_copy = nearest;
                }
            }
        } // for l
        //
        // new_point has been inserted at the beginning in table
        // so that we can call reverse_update_neighborhoodwe consitently
        // now reverse update of neighbours.
        self.reverse_update_neighborhood_simple(Arc::clone(&new_point));
        //
        self.layer_indexed_points.check_entry_point(&new_point);
        //
        trace!("Hnsw exiting insert new point {:?} ", new_point.p_id);
        inserted
    } // end of insert

    /// Insert in parallel a slice of Vec\<T\> each associated to its id.    
    /// It uses Rayon for threading so the number of insertions asked for must be large enough to be efficient.  
    /// Typically 1000 * the number of threads.  
    /// Many consecutive parallel_insert can be done, so the size of vector inserted in one insertion can be optimized.  
    ///
    /// NOTE: Small random deviation from serial insertion can occur due to thread race.
    ///       To control this,if necessary, it can be useful to reduce number of layers (see [modify_level_scale](Self::modify_level_scale)) or to increase max_nb_connection.
    pub fn parallel_insert(&self, datas: &[(&Vec<T>, usize)]) {
        debug!("entering parallel_insert");
        datas
            .par_iter()
            .for_each(|&(item, v)| self.insert((item.as_slice(), v)));
        debug!("exiting parallel_insert");
    } // end of parallel_insert

    /// Insert in parallel slices of \[T\] each associated to its id.    
    /// It uses Rayon for threading so the number of insertions asked for must be large enough to be efficient.  
    /// Typically 1000 * the number of threads.  
    /// Facilitates the use with the ndarray crate as we can extract slices (for data in contiguous order) from Array.
    pub fn parallel_insert_slice(&self, datas: &Vec<(&[T], usize)>) {
        datas.par_iter().for_each(|&item| self.insert_slice(item));
    } // end of parallel_insert

    /// [`Self::insert_owned`] in parallel: the new points, in the order of `datas`.
    pub fn parallel_insert_owned(&self, datas: Vec<(Vec<T>, usize)>) -> Vec<Arc<Point<'b, T>>> {
        datas
            .into_par_iter()
            .map(|(data, origin_id)| self.insert_owned(data, origin_id))
            .collect()
    }

    /// insert new_point in neighbourhood info of point
    fn reverse_update_neighborhood_simple(&self, new_point: Arc<Point<'b, T>>) {
        //  println!("reverse update neighbourhood for  new point {:?} ", new_point.p_id);
        trace!(
            "reverse update neighbourhood for  new point {:?} ",
            new_point.p_id
        );
        let level = new_point.p_id.0;
        for l in (0..level + 1).rev() {
            for q in &new_point.neighbours.read()[l as usize] {
                if new_point.rank != q.rank as usize {
                    // as new point is in global table, do not loop and deadlock!!
                    let q_point = self.layer_indexed_points.point_of(q);
                    let mut q_point_neighbours = q_point.neighbours.write();
                    let n_to_add = Edge {
                        rank: new_point.rank as u32,
                        dist: q.dist,
                    };
                    // fix from vidaunited (https://github.com/vidaunited), store potential reverse neighbout at correct layer
                    // This potential reverse add provide a symetric edge only if new_point is sufficiently close to q_point from q_point point of view
                    let l_n = l as usize;
                    let already = q_point_neighbours[l_n]
                        .iter()
                        .position(|old| old.rank == n_to_add.rank);
                    if already.is_some() {
                        // debug!(" new_point.p_id {:?} already in neighbourhood of  q_point {:?} at index {:?}", new_point.p_id, q_point.p_id, already.unwrap());
                        // q_point.debug_dump();  cannot be called as its neighbours are locked write by this method.
                        //   new_point.debug_dump();
                        //   panic!();
                        continue;
                    }
                    // Somna's patch: the list stays sorted and within its bound; the new
                    // point goes in at its place, or not at all when the list is full of
                    // nearer points (the same result as the original push, sort and drop
                    // the farthest, without the sort or the reallocation).
                    let threshold_shrinking = if l_n > 0 {
                        self.max_nb_connection
                    } else {
                        2 * self.max_nb_connection
                    };
                    let list = &mut q_point_neighbours[l_n];
                    let at = list.partition_point(|n| n.dist <= n_to_add.dist);
                    if list.len() < threshold_shrinking {
                        // room for one more entry, not twice as many (see `exact_list`)
                        list.reserve_exact(1);
                        list.insert(at, n_to_add);
                    } else {
                        // a full list: cut back with the new point among its entries, in a
                        // list of its own, then kept in a list of exactly what is left
                        let mut all = Vec::with_capacity(list.len() + 1);
                        all.extend(list.drain(..at));
                        all.push(n_to_add);
                        all.append(list);
                        self.prune(&mut all, threshold_shrinking);
                        *list = exact_list(all);
                    }
                } // end protection against point identity
            }
        }
        //   println!("     exitingreverse update neighbourhood for  new point {:?} ", new_point.p_id);
    } // end of reverse_update_neighborhood_simple

    /// Keeps at most `keep` entries of `list` (sorted by distance to its owner, nearest
    /// first) chosen by the selection heuristic, as hnswlib does when a list overflows: an
    /// entry stays when it is nearer the owner than every entry kept before it.
    fn prune(&self, list: &mut Vec<Edge>, keep: usize) {
        let points = &self.layer_indexed_points;
        let mut kept = 0;
        for i in 0..list.len() {
            if kept == keep {
                break;
            }
            let (head, tail) = list.split_at(i);
            let c = &tail[0];
            let v = points.entry_of(c).1;
            let diverse = head[..kept]
                .iter()
                .all(|r| self.dist_f.eval(v, points.entry_of(r).1) >= c.dist);
            if diverse {
                list.swap(kept, i);
                kept += 1;
            }
        }
        list.truncate(kept);
    }

    pub fn get_point_indexation(&self) -> &PointIndexation<'b, T> {
        &self.layer_indexed_points
    }

    // This is best explained in : Navarro. Searching in metric spaces by spatial approximation.
    /// simplest searh neighbours
    // The binary heaps here is with negative distance sorted.
    #[allow(clippy::too_many_arguments)]
    fn select_neighbours(
        &self,
        data: &[T],
        candidates: &mut BinaryHeap<PointWithOrder<'b, T>>,
        nb_neighbours_asked: usize,
        extend_candidates_asked: bool,
        layer: u8,
        keep_pruned: bool,
        neighbours_vec: &mut Vec<PointWithOrder<'b, T>>,
    ) {
        //
        trace!(
            "entering select_neighbours : nb candidates: {}",
            candidates.len()
        );
        //
        neighbours_vec.clear();
        // we will extend if we do not have enough candidates and it is explicitly asked in arg
        let mut extend_candidates = false;
        if candidates.len() <= nb_neighbours_asked {
            if !extend_candidates_asked {
                // just transfer taking care of signs
                while !candidates.is_empty() {
                    let p = candidates.pop().unwrap();
                    assert!(-p.dist_to_ref >= 0.);
                    neighbours_vec.push(PointWithOrder::new(&p.point_ref, -p.dist_to_ref));
                }
                return;
            } else {
                extend_candidates = true;
            }
        }
        //
        //
        //extend_candidates = true;
        //
        if extend_candidates {
            let mut candidates_set = HashMap::<PointId, Arc<Point<T>>>::new();
            for c in candidates.iter() {
                candidates_set.insert(c.point_ref.p_id, Arc::clone(&c.point_ref));
            }
            let mut new_candidates_set = HashMap::<PointId, Arc<Point<T>>>::new();
            // get a list of all neighbours of candidates
            for (_p_id, p_point) in candidates_set.iter() {
                let n_p_layer = &p_point.neighbours.read()[layer as usize];
                for q in n_p_layer {
                    let q_id = self.layer_indexed_points.point_of(q).p_id;
                    if !candidates_set.contains_key(&q_id)
                        && !new_candidates_set.contains_key(&q_id)
                    {
                        let q_point = self.layer_indexed_points.arc_of(q);
                        new_candidates_set.insert(q_id, q_point);
                    }
                }
            } // end of for p
            trace!(
                "select neighbours extend candidates from  : {:?} adding : {:?}",
                candidates.len(),
                new_candidates_set.len()
            );
            for (_p_id, p_point) in new_candidates_set.iter() {
                let dist_topoint = self.dist_f.eval(data, p_point.data.get_v());
                candidates.push(PointWithOrder::new(p_point, -dist_topoint));
            }
        } // end if extend_candidates
        //
        let mut discarded_points = BinaryHeap::<PointWithOrder<T>>::new();
        while !candidates.is_empty() && neighbours_vec.len() < nb_neighbours_asked {
            // compare distances of e to data. we do not need to recompute dists!
            if let Some(e_p) = candidates.pop() {
                let mut e_to_insert = true;
                let e_point_v = e_p.point_ref.data.get_v();
                assert!(e_p.dist_to_ref <= 0.);
                // is e_p the nearest to reference? data than to previous neighbours
                if !neighbours_vec.is_empty() {
                    e_to_insert = !neighbours_vec.iter().any(|d| {
                        self.dist_f.eval(e_point_v, d.point_ref.data.get_v()) <= -e_p.dist_to_ref
                    });
                }
                if e_to_insert {
                    trace!("inserting neighbours : {:?} ", e_p.point_ref.p_id);
                    neighbours_vec.push(PointWithOrder::new(&e_p.point_ref, -e_p.dist_to_ref));
                } else {
                    trace!("discarded neighbours : {:?} ", e_p.point_ref.p_id);
                    // ep is taken from a binary heap, so it has a negative sign, we keep its sign
                    // to store it in another binary heap will possibly need to retain the best ones from the discarde binaryHeap
                    if keep_pruned {
                        discarded_points.push(PointWithOrder::new(&e_p.point_ref, e_p.dist_to_ref));
                    }
                }
            }
        }
        // now this part of neighbours is the most interesting and is distance sorted.

        // not pruned are at the end of neighbours_vec which is not re-sorted , but discarded are sorted.
        if keep_pruned {
            while !discarded_points.is_empty() && neighbours_vec.len() < nb_neighbours_asked {
                let best_point = discarded_points.pop().unwrap();
                // do not forget to reverse sign
                assert!(best_point.dist_to_ref <= 0.);
                neighbours_vec.push(PointWithOrder::new(
                    &best_point.point_ref,
                    -best_point.dist_to_ref,
                ));
            }
        };
        //
        if log::log_enabled!(log::Level::Trace) {
            trace!(
                "exiting select_neighbours : nb candidates: {}",
                neighbours_vec.len()
            );
            for n in neighbours_vec {
                trace!("   neighbours {:?} ", n.point_ref.p_id);
            }
        }
        //
    } // end of select_neighbours

    /// A utility to get printed info on how many points there are in each layer.
    pub fn dump_layer_info(&self) {
        self.layer_indexed_points.debug_dump();
    }

    // search the first knbn nearest neigbours of a data, but can modify ef for layer > 1
    // This function return Vec<Arc<PointWithOrder<T> >>
    // The parameter ef controls the width of the search in the lowest level, it must be greater
    // than number of neighbours asked. A rule of thumb could be between knbn and max_nb_connection.
    #[allow(unused)]
    fn search_general(&self, data: &[T], knbn: usize, ef_arg: usize) -> Vec<Neighbour> {
        //
        let mut entry_point;
        {
            // a lock on an option an a Arc<Point>
            let entry_point_opt_ref = self.layer_indexed_points.entry_point.read();
            if entry_point_opt_ref.is_none() {
                return Vec::<Neighbour>::new();
            } else {
                entry_point = Arc::clone((*entry_point_opt_ref).as_ref().unwrap());
            }
        }
        //
        let mut dist_to_entry = self.dist_f.eval(data, entry_point.as_ref().data.get_v());
        for layer in (1..=entry_point.p_id.0).rev() {
            let mut neighbours = self.search_layer(data, Arc::clone(&entry_point), 1, layer, None);
            neighbours = from_positive_binaryheap_to_negative_binary_heap(&mut neighbours);
            if let Some(entry_point_tmp) = neighbours.pop() {
                // get the lowest  distance point.
                let tmp_dist = self
                    .dist_f
                    .eval(data, entry_point_tmp.point_ref.data.get_v());
                if tmp_dist < dist_to_entry {
                    entry_point = Arc::clone(&entry_point_tmp.point_ref);
                    dist_to_entry = tmp_dist;
                }
            }
        }
        // ef must be greater than knbn. Possibly it should be between knbn and self.max_nb_connection
        let ef = ef_arg.max(knbn);
        // now search with asked ef in layer 0
        let neighbours_heap = self.search_layer(data, entry_point, ef, 0, None);
        // go from heap of points with negative dist to a sorted vec of increasing points with > 0 distances.
        let neighbours = neighbours_heap.into_sorted_vec();
        // get the min of K and ef points into a vector.
        //
        let last = knbn.min(ef).min(neighbours.len());
        let knn_neighbours: Vec<Neighbour> = neighbours[0..last]
            .iter()
            .map(|p| Neighbour::new(p.point_ref.origin_id, p.dist_to_ref, p.point_ref.p_id))
            .collect();

        knn_neighbours
    } // end of knn_search

    /// a filtered version of [`Self::search`].  
    /// A filter can be added to the search to get nodes with a particular property or id constraint.  
    /// See examples in tests/filtertest.rs
    pub fn search_filter(
        &self,
        data: &[T],
        knbn: usize,
        ef_arg: usize,
        filter: Option<&dyn FilterT>,
    ) -> Vec<Neighbour> {
        //
        let entry_point;
        {
            // a lock on an option an a Arc<Point>
            let entry_point_opt_ref = self.layer_indexed_points.entry_point.read();
            if entry_point_opt_ref.is_none() {
                return Vec::<Neighbour>::new();
            } else {
                entry_point = Arc::clone((*entry_point_opt_ref).as_ref().unwrap());
            }
        }
        //
        let mut dist_to_entry = self.dist_f.eval(data, entry_point.as_ref().data.get_v());
        let mut pivot = Arc::clone(&entry_point);
        // Somna's patch: in each upper layer move to the nearest neighbour until none is
        // nearer (hnswlib's descent); the original looked at the pivot's neighbours once
        // per layer.
        for layer in (1..=entry_point.p_id.0).rev() {
            loop {
                let mut nearer: Option<Arc<Point<'b, T>>> = None;
                for n in &pivot.neighbours.read()[layer as usize] {
                    let dist = self
                        .dist_f
                        .eval(data, self.layer_indexed_points.entry_of(n).1);
                    if dist < dist_to_entry {
                        dist_to_entry = dist;
                        nearer = Some(self.layer_indexed_points.arc_of(n));
                    }
                }
                match nearer {
                    Some(p) => pivot = p,
                    None => break,
                }
            }
        }
        // ef must be greater than knbn. Possibly it should be between knbn and self.max_nb_connection
        let ef = ef_arg.max(knbn);
        log::debug!("pivot changed , current pivot {:?}", pivot.get_point_id());
        // search lowest non empty layer (in case of search with incomplete lower layer at beginning of hnsw filling)
        let mut l = 0u8;
        let layer_to_search = loop {
            if self.get_point_indexation().get_layer_nb_point(l as usize) > 0 {
                break l;
            }
            l += 1;
        };
        // now search with asked ef in lower layer: nearest first, all passing the filter
        self.search_layer_scored(data, &pivot, ef, layer_to_search, filter)
            .into_iter()
            .take(knbn)
            .map(|s| Neighbour::new(s.point.origin_id, s.dist, s.point.p_id))
            .collect()
    } // end of search_filter

    #[inline]
    pub fn search_possible_filter(
        &self,
        data: &[T],
        knbn: usize,
        ef_arg: usize,
        filter: Option<&dyn FilterT>,
    ) -> Vec<Neighbour> {
        self.search_filter(data, knbn, ef_arg, filter)
    }

    /// search the first knbn nearest neigbours of a data and returns a Vector of Neighbour.   
    /// The parameter ef controls the width of the search in the lowest level, it must be greater
    /// than number of neighbours asked.  
    /// A rule of thumb could be between knbn and max_nb_connection.
    pub fn search(&self, data: &[T], knbn: usize, ef_arg: usize) -> Vec<Neighbour> {
        self.search_possible_filter(data, knbn, ef_arg, None)
    }

    fn search_with_id(
        &self,
        request: (usize, &Vec<T>),
        knbn: usize,
        ef: usize,
    ) -> (usize, Vec<Neighbour>) {
        (request.0, self.search(request.1, knbn, ef))
    }

    /// knbn is the number of nearest neigbours asked for. Returns for each data vector
    /// a Vector of Neighbour
    pub fn parallel_search(&self, datas: &[Vec<T>], knbn: usize, ef: usize) -> Vec<Vec<Neighbour>> {
        let (sender, receiver) = channel();
        // make up requests
        let nb_request = datas.len();
        let requests: Vec<(usize, &Vec<T>)> = (0..nb_request).zip(datas.iter()).collect();
        //
        requests.par_iter().for_each_with(sender, |s, item| {
            s.send(self.search_with_id(*item, knbn, ef)).unwrap()
        });
        let req_res: Vec<(usize, Vec<Neighbour>)> = receiver.iter().collect();
        // now sort to respect the key order of input
        let mut answers = Vec::<Vec<Neighbour>>::with_capacity(datas.len());
        // get a map from request id to rank
        let mut req_hash = HashMap::<usize, usize>::new();
        for (i, elt) in req_res.iter().enumerate() {
            // the response of request req_res[i].0 is at rank i
            req_hash.insert(elt.0, i);
        }
        for i in 0..datas.len() {
            let answer_i = req_hash.get_key_value(&i).unwrap().1;
            answers.push((req_res[*answer_i].1).clone());
        }
        answers
    } // end of insert_parallel
} // end of Hnsw

// This function takes a binary heap with points declared with a negative distance
// and returns a vector of points with their correct positive distance to some reference distance
// The vector is sorted by construction
#[allow(unused)]
fn from_negative_binaryheap_to_sorted_vector<'b, T: Send + Sync + Copy>(
    heap_points: &mut BinaryHeap<PointWithOrder<'b, T>>,
) -> Vec<PointWithOrder<'b, T>> {
    let nb_points = heap_points.len();
    let mut vec_points = Vec::<PointWithOrder<T>>::with_capacity(nb_points);
    //
    for p in heap_points.iter() {
        assert!(p.dist_to_ref <= 0.);
        let reverse_p = PointWithOrder::new(&p.point_ref, -p.dist_to_ref);
        vec_points.push(reverse_p);
    }
    trace!(
        "from_negative_binaryheap_to_sorted_vector nb points in out {:?} {:?} ",
        nb_points,
        vec_points.len()
    );
    vec_points
}

// This function takes a binary heap with points declared with a positive distance
// and returns a binary_heap of points with their correct negative distance to some reference distance
//
fn from_positive_binaryheap_to_negative_binary_heap<'b, T: Send + Sync + Clone>(
    positive_heap: &mut BinaryHeap<PointWithOrder<'b, T>>,
) -> BinaryHeap<PointWithOrder<'b, T>> {
    let nb_points = positive_heap.len();
    let mut negative_heap = BinaryHeap::<PointWithOrder<T>>::with_capacity(nb_points);
    //
    for p in positive_heap.iter() {
        assert!(p.dist_to_ref >= 0.);
        let reverse_p = PointWithOrder::new(&p.point_ref, -p.dist_to_ref);
        negative_heap.push(reverse_p);
    }
    trace!(
        "from_positive_binaryheap_to_negative_binary_heap nb points in out {:?} {:?} ",
        nb_points,
        negative_heap.len()
    );
    negative_heap
}

// essentialy to check dump/reload conssistency
// in fact checks only equality of graph
#[allow(unused)]
pub(crate) fn check_graph_equality<T1, D1, T2, D2>(hnsw1: &Hnsw<T1, D1>, hnsw2: &Hnsw<T2, D2>)
where
    T1: Copy + Clone + Send + Sync,
    D1: Distance<T1> + Default + Send + Sync,
    T2: Copy + Clone + Send + Sync,
    D2: Distance<T2> + Default + Send + Sync,
{
    //
    debug!("In check_graph_equality");
    //
    assert_eq!(hnsw1.get_nb_point(), hnsw2.get_nb_point());
    // check for entry point
    assert!(
        hnsw1.layer_indexed_points.entry_point.read().is_some()
            || hnsw1.layer_indexed_points.entry_point.read().is_some(),
        "one entry point is None"
    );
    let ep1_read = hnsw1.layer_indexed_points.entry_point.read();
    let ep2_read = hnsw2.layer_indexed_points.entry_point.read();
    let ep1 = ep1_read.as_ref().unwrap();
    let ep2 = ep2_read.as_ref().unwrap();
    assert_eq!(
        ep1.origin_id, ep2.origin_id,
        "different entry points {:?} {:?}",
        ep1.origin_id, ep2.origin_id
    );
    assert_eq!(ep1.p_id, ep2.p_id, "origin id {:?} ", ep1.origin_id);
    // check layers
    let layers_1 = hnsw1.layer_indexed_points.points_by_layer.read();
    let layers_2 = hnsw2.layer_indexed_points.points_by_layer.read();
    let mut nb_point_checked = 0;
    let mut nb_neighbours_checked = 0;
    for i in 0..NB_LAYER_MAX as usize {
        debug!("Checking layer {:?}", i);
        assert_eq!(layers_1[i].len(), layers_2[i].len());
        for j in 0..layers_1[i].len() {
            let p1 = &layers_1[i][j];
            let p2 = &layers_2[i][j];
            assert_eq!(p1.origin_id, p2.origin_id);
            assert_eq!(
                p1.p_id, p2.p_id,
                "Checking origin_id point {:?} ",
                p1.origin_id
            );
            nb_point_checked += 1;
            // check neighborhood
            let nbgh1 = p1.neighbours.read();
            let nbgh2 = p2.neighbours.read();
            assert_eq!(nbgh1.len(), nbgh2.len());
            for k in 0..nbgh1.len() {
                assert_eq!(nbgh1[k].len(), nbgh2[k].len());
                for l in 0..nbgh1[k].len() {
                    // (ranks may differ: a reload ranks points in layer order)
                    let n1 = hnsw1.layer_indexed_points.point_of(&nbgh1[k][l]);
                    let n2 = hnsw2.layer_indexed_points.point_of(&nbgh2[k][l]);
                    assert_eq!(n1.origin_id, n2.origin_id);
                    assert_eq!(n1.p_id, n2.p_id);
                    // CAVEAT for precision with f32
                    assert_eq!(nbgh1[k][l].dist, nbgh2[k][l].dist);
                    nb_neighbours_checked += 1;
                }
            }
        } // end of for j
    } // end of for i
    assert_eq!(nb_point_checked, hnsw1.get_nb_point());
    debug!("nb neighbours checked {:?}", nb_neighbours_checked);
    debug!("exiting check_equality");
} // end of check_reload

#[cfg(test)]
mod tests {

    use super::*;
    use anndists::dist;
    use cpu_time::ProcessTime;

    fn log_init_test() {
        let _ = env_logger::builder().is_test(true).try_init();
    }

    /// Somna's patch: a point holds one list per layer it is in, layer 0's in the point
    /// itself; each layer's list is reached by its number, and a layer above the point's
    /// top has no list.
    #[test]
    fn a_point_has_one_list_per_layer_and_layer_0_inline() {
        let edge = |rank| Edge { rank, dist: 0.5 };
        let mut lists = Lists::new(2);
        assert_eq!(lists.len(), 3);
        lists[0].push(edge(7));
        lists[2].push(edge(9));
        lists[2].push(edge(10));
        assert_eq!(lists.get(0).map(|l| l[0].rank), Some(7));
        assert_eq!(lists[1].len(), 0);
        assert_eq!(lists[2].len(), 2);
        assert!(lists.get(3).is_none());
        let sizes: Vec<usize> = lists.iter().map(Vec::len).collect();
        assert_eq!(sizes, vec![1, 0, 2]);
        // a point in layer 0 only: one list, and no allocation for upper ones
        let bottom = Lists::new(0);
        assert_eq!(bottom.len(), 1);
        assert_eq!(bottom.upper.capacity(), 0);
        assert!(bottom.get(1).is_none());
    }

    /// Somna's patch: a neighbour entry is a rank and a distance, half the size of the
    /// `Arc`, distance and rank it held before, and each entry resolves to its own point.
    #[test]
    fn a_neighbour_entry_is_eight_bytes_and_names_its_point() {
        assert_eq!(std::mem::size_of::<Edge>(), 8);
        let hnsw = Hnsw::<f32, dist::DistL2>::new(4, 200, 16, 20, dist::DistL2 {});
        let data: Vec<Vec<f32>> = (0..200)
            .map(|i| vec![i as f32, (i * i % 17) as f32])
            .collect();
        for (i, v) in data.iter().enumerate() {
            hnsw.insert((v, i));
        }
        let indexation = hnsw.get_point_indexation();
        let mut entries = 0;
        for p in indexation {
            for list in p.neighbours.read().iter() {
                for e in list {
                    let (n, v) = indexation.entry_of(e);
                    assert_eq!(n.rank, e.rank as usize);
                    assert_eq!(v, &data[n.get_origin_id()][..]);
                    let d = dist::DistL2 {}.eval(p.get_v(), v);
                    assert!((d - e.dist).abs() <= 1e-4 * d.max(1.0), "{d} vs {}", e.dist);
                    entries += 1;
                }
            }
        }
        assert!(entries > 400, "{entries} entries");
    }

    #[test]
    fn test_iter_point() {
        //
        println!("\n\n test_iter_point");
        //
        let mut rng = rand::rng();
        let unif = Uniform::<f32>::new(0., 1.).unwrap();
        let nbcolumn = 5000;
        let nbrow = 10;
        let mut xsi;
        let mut data = Vec::with_capacity(nbcolumn);
        for j in 0..nbcolumn {
            data.push(Vec::with_capacity(nbrow));
            for _ in 0..nbrow {
                xsi = rng.sample(unif);
                data[j].push(xsi);
            }
        }
        //
        // check insertion
        let ef_construct = 25;
        let nb_connection = 10;
        let start = ProcessTime::now();
        let hns = Hnsw::<f32, dist::DistL1>::new(
            nb_connection,
            nbcolumn,
            16,
            ef_construct,
            dist::DistL1 {},
        );
        for (i, d) in data.iter().enumerate() {
            hns.insert((d, i));
        }
        let cpu_time = start.elapsed();
        println!(" test_insert_iter_point time inserting {:?}", cpu_time);

        hns.dump_layer_info();
        // now check iteration
        let ptiter = hns.get_point_indexation().into_iter();
        let mut nb_dumped = 0;
        for _point in ptiter {
            //    println!("point : {:?}", _point.p_id);
            nb_dumped += 1;
        }
        //
        assert_eq!(nb_dumped, nbcolumn);
    } // end of test_iter_point

    #[test]
    fn test_iter_layerpoint() {
        //
        println!("\n\n test_iter_point");
        //
        let mut rng = rand::rng();
        let unif = Uniform::<f32>::new(0., 1.).unwrap();
        let nbcolumn = 5000;
        let nbrow = 10;
        let mut xsi;
        let mut data = Vec::with_capacity(nbcolumn);
        for j in 0..nbcolumn {
            data.push(Vec::with_capacity(nbrow));
            for _ in 0..nbrow {
                xsi = rng.sample(unif);
                data[j].push(xsi);
            }
        }
        //
        // check insertion
        let ef_construct = 25;
        let nb_connection = 10;
        let start = ProcessTime::now();
        let hns = Hnsw::<f32, dist::DistL1>::new(
            nb_connection,
            nbcolumn,
            16,
            ef_construct,
            dist::DistL1 {},
        );
        for (i, d) in data.iter().enumerate() {
            hns.insert((d, i));
        }
        let cpu_time = start.elapsed();
        println!(" test_insert_iter_point time inserting {:?}", cpu_time);

        hns.dump_layer_info();
        // now check iteration
        let layer_num = 0;
        let nbpl = hns.get_point_indexation().get_layer_nb_point(layer_num);
        let layer_iter = hns.get_point_indexation().get_layer_iterator(layer_num);
        //
        let mut nb_dumped = 0;
        for _point in layer_iter {
            //    println!("point : {:?}", _point.p_id);
            nb_dumped += 1;
        }
        println!(
            "test_iter_layerpoint : nb point in layer {} , nb found {}",
            nbpl, nb_dumped
        );
        //
        assert_eq!(nb_dumped, nbpl);
    } // end of test_iter_layerpoint

    // we should find point even if it is in layer >= 1
    #[test]
    fn test_sparse_search() {
        log_init_test();
        //
        for _ in 0..800 {
            let hnsw: Hnsw<f32, dist::DistL1> =
                Hnsw::new(15, 100_000, 20, 500_000, dist::DistL1 {});
            hnsw.insert((&[1.0, 0.0, 0.0, 0.0], 0));
            let result = hnsw.search(&[1.0, 0.0, 0.0, 0.0], 2, 10);
            assert_eq!(result, vec![Neighbour::new(0, 0.0, PointId(0, 0))]);
        }
    }
} // end of module test
