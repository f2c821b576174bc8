pub mod feed;
pub mod post;
pub mod site;
pub mod slug;
